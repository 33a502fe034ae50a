/**
 * Adapter-author names the root export `@sbx/core` carried in 0.1, kept there (deprecated) only because adapters
 * written against 0.1 import them from it: the frozen 0.1-shape adapter of the contract suite
 * (`contract-tests/fixtures/full-driver-adapter`) must keep compiling unchanged (ADR 0040). Everything else an adapter
 * needs is on `@sbx/core/adapter` only. Remove these in 1.0.
 */
import { defineCapabilities as defineAdapterCapabilities } from "./v1/capabilities.js";
import type * as Options from "./v1/options.js";
import type * as Provider from "./v1/provider.js";

/** @deprecated Import `defineCapabilities` from `@sbx/core/adapter` (ADR 0040). */
export const defineCapabilities = defineAdapterCapabilities;
/** @deprecated Import the type `SandboxDriverV1` from `@sbx/core/adapter` (ADR 0040). */
export type SandboxDriverV1 = Provider.SandboxDriverV1;
/** @deprecated Import the type `DriverAudit` from `@sbx/core/adapter` (ADR 0040). */
export type DriverAudit = Provider.DriverAudit;
/** @deprecated Import the type `SpawnRequest` from `@sbx/core/adapter` (ADR 0040). */
export type SpawnRequest = Provider.SpawnRequest;
/** @deprecated Import the type `SpawnedProcess` from `@sbx/core/adapter` (ADR 0040). */
export type SpawnedProcess = Provider.SpawnedProcess;
/** @deprecated Import the type `ResolvedCreateOptions` from `@sbx/core/adapter` (ADR 0040). */
export type ResolvedCreateOptions = Options.ResolvedCreateOptions;
