import type { SandboxProviderV1 } from "@sbx/core";
import { createExampleProvider, type ExampleProviderSettings } from "./example-provider.js";

export { createExampleProvider, type ExampleProviderSettings } from "./example-provider.js";

/**
 * The entry point every sbx adapter package exports: core's `registerProvider(scheme, createSandboxProvider)`
 * (or a `@sbx/<scheme>` package name) finds it by this name.
 */
export function createSandboxProvider(settings?: Record<string, unknown>): SandboxProviderV1 {
  return createExampleProvider(settings as ExampleProviderSettings | undefined);
}
