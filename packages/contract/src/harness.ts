import {
  capabilitiesSchema,
  createSandbox,
  isSbxError,
  type BackendStatus,
  type Capabilities,
  type CapabilityName,
  type CreateSandboxOptions,
  type ResourceLimits,
  type Sandbox,
  type SandboxProviderV1,
  type SbxErrorCode,
  type SbxError,
} from "@sbx/core";
import { backendsSupporting } from "@sbx/core/adapter";
import { describe, expect, it, type TestContext } from "vitest";
import { CONTRACT_TEST_IDS, type ContractTestId } from "./test-ids.js";

/** How the network group starts servers a sandbox may (or may not) reach. Traffic stays on servers the test starts. */
export interface NetworkFixture {
  /** Starts `count` HTTP servers on distinct hosts, each answering 200 "sbx-ok" on GET /. */
  startServers(count: number): Promise<{ servers: Array<{ url: string; host: string }>; close(): Promise<void> }>;
  /** Extra create options egress-allowed sandboxes need to reach the servers (for example Docker network settings). */
  createOptions?: CreateSandboxOptions;
  /** Shell command that prints the HTTP status of GET `url` (and exits 0), or fails. Default: `defaultProbeCommand`. */
  probeCommand?(url: string): string;
}

/** Options of `describeSandboxContract` and of every `describe*Contract` group. */
export interface SandboxContractOptions {
  /** Merged into every `createSandbox(provider, ...)` call the suite makes (env, secrets, settings and metadata merged per key). */
  createOptions?: CreateSandboxOptions;
  /** Per-test timeout in milliseconds. Default 60000. */
  timeoutMs?: number;
  /** Test id → reason. The reason is required and shown in the report. Unknown ids are an error, so typos do not hide tests. */
  skip?: Partial<Record<ContractTestId, string>>;
  /** How to start servers for the network group. Without it, the network tests that need a server skip with a reason. */
  network?: NetworkFixture;
  /** Where host folders are mounted inside the sandbox in the mounts group. Default `"/mnt/sbx-contract"`. */
  mountPath?: string;
  /** Size of the streamed round-trip file in the files group. Default 64 MiB. */
  largeFileBytes?: number;
  /**
   * Removes a sandbox behind sbx's back, as an operator, an expired lifetime or a crashed host would (for Docker:
   * remove the container through the engine; for the fake: `provider.faults.loseSandbox(id)`). The lost-sandbox group
   * uses it; without it those tests skip with the reason.
   */
  removeOutOfBand?: (sandbox: Sandbox) => Promise<void>;
  /**
   * Asks the backend, not sbx, whether a sandbox's resource still exists (for Docker: inspect the container; for the
   * fake: `provider.liveSandboxIds`). `lifecycle.kill` uses it to prove `kill()` removed the resource (a driver whose
   * `destroy()` does nothing fails), `lifecycle.invalid-create-options` to prove a refused create left nothing. Without
   * it `lifecycle.kill` fails, saying so: wire it, or skip the test with a reason.
   */
  sandboxExists?: (sandboxId: string) => Promise<boolean>;
  /**
   * The resource limits `limits.applied` requests, which must all be applied exactly (default `{ cpus: 1, memoryMiB:
   * 256, pids: 128 }`). A backend that refuses some limit (Modal has no pids limit) names the ones it applies; the test
   * then also proves a request for the others is refused with `CapabilityNotSupportedError` before anything is created.
   * Each limit named here is also measured from inside the sandbox (`limits.memory-measured`, `limits.cpus-measured`,
   * `limits.pids-measured`, ADR 0029).
   */
  limits?: ResourceLimits;
  /**
   * The one size every terminal of this backend has, when it cannot set another (Modal: 80×24, no resize). A declared
   * difference, not a skip: `terminals.size-and-resize` then proves that a terminal of another size and `resize()` are
   * refused with `CapabilityNotSupportedError`, and measures this size inside with stty. Default: the backend sizes
   * terminals as asked.
   */
  terminalFixedSize?: { readonly cols: number; readonly rows: number };
  /**
   * `"split"` when the backend cannot pair a rename's two names (E2B: envd sends the old name and the new one with
   * nothing linking them) and reports it as a `remove` of the old path and a `create` of the new one, as a move out of
   * and into the tree. A declared difference: `file-watch.events-in-order` then expects exactly that pair where a
   * `rename` would be. Default `"paired"`.
   */
  fileWatchRenames?: "paired" | "split";
}

/** The provider factory: synchronous, and must not touch the backend (it is called at collection time). */
export type SandboxProviderFactoryForContract = () => SandboxProviderV1;

/** What every group receives: the provider, its manifest (read once at collection time), and helpers. */
export interface ContractHarness {
  /** The name given to `describeSandboxContract`. */
  readonly name: string;
  /** The provider under test. */
  readonly provider: SandboxProviderV1;
  /** Its manifest, read at collection time; groups branch on it. */
  readonly capabilities: Capabilities;
  /** The options given. */
  readonly options: SandboxContractOptions;
  /** Registers one contract test under its stable id (honours `skip`, availability and `SBX_REQUIRE`). */
  contractTest(id: ContractTestId, title: string, body: (context: TestContext) => Promise<void>): void;
  /** `createSandbox(provider, { ...options.createOptions, ...extra })`. */
  createSandbox(extra?: CreateSandboxOptions): Promise<Sandbox>;
}

const DEFAULT_TIMEOUT_MS = 60_000;
const statusCache = new WeakMap<SandboxProviderV1, Promise<BackendStatus>>();
const warnedBackends = new Set<string>();

/** Backends named in `SBX_REQUIRE` (comma list): for those, unavailability fails instead of skipping. */
export function requiredBackends(): string[] {
  return (process.env.SBX_REQUIRE ?? "")
    .split(",")
    .map((name) => name.trim())
    .filter(Boolean);
}

function detectOnce(provider: SandboxProviderV1): Promise<BackendStatus> {
  let status = statusCache.get(provider);
  if (!status) {
    status = provider.detect().catch((error: unknown) => ({
      backend: provider.backend,
      usable: false,
      reason: `detect() threw: ${error instanceof Error ? error.message : String(error)}`,
      remedy: "",
      isolating: provider.isolating,
    }));
    statusCache.set(provider, status);
  }
  return status;
}

function mergeCreateOptions(base: CreateSandboxOptions | undefined, extra: CreateSandboxOptions | undefined): CreateSandboxOptions {
  const merged: CreateSandboxOptions = { ...base, ...extra };
  for (const key of ["env", "secrets", "settings", "metadata"] as const) {
    if (base?.[key] || extra?.[key]) (merged as Record<string, unknown>)[key] = { ...base?.[key], ...extra?.[key] };
  }
  return merged;
}

/** Builds the harness for one provider. Calls `factory()` now (collection time); it must not touch the backend. */
export function createContractHarness(
  name: string,
  factory: SandboxProviderFactoryForContract,
  options: SandboxContractOptions = {},
): ContractHarness {
  if (typeof name !== "string" || name.length === 0) throw new TypeError("describeSandboxContract: name must be a non-empty string");
  if (typeof factory !== "function") throw new TypeError("describeSandboxContract: factory must be a function returning a SandboxProviderV1");
  for (const [id, reason] of Object.entries(options.skip ?? {})) {
    if (!(CONTRACT_TEST_IDS as readonly string[]).includes(id))
      throw new TypeError(`describeSandboxContract: options.skip names an unknown test id ${JSON.stringify(id)}`);
    if (typeof reason !== "string" || reason.trim().length === 0)
      throw new TypeError(`describeSandboxContract: options.skip[${JSON.stringify(id)}] needs a reason`);
  }
  const provider = factory();
  if (!provider || typeof provider !== "object") throw new TypeError("describeSandboxContract: factory() must return a SandboxProviderV1 object");
  const capabilities = provider.capabilities;
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;

  async function ensureAvailable(context: TestContext): Promise<void> {
    const status = await detectOnce(provider);
    if (status.usable) return;
    const reason = `${provider.backend} backend unavailable: ${status.reason}${status.remedy ? ` (${status.remedy})` : ""}`;
    if (requiredBackends().includes(provider.backend))
      throw new Error(`${reason}. SBX_REQUIRE names ${provider.backend}, so this is a failure, not a skip.`);
    if (!warnedBackends.has(provider.backend)) {
      warnedBackends.add(provider.backend);
      console.warn(
        `\n[sbx contract] SKIPPING every ${provider.backend} contract test: ${reason}. Set SBX_REQUIRE=${provider.backend} to make this a failure.\n`,
      );
    }
    context.skip(reason);
  }

  return {
    name,
    provider,
    capabilities,
    options,
    contractTest(id, title, body) {
      const skipReason = options.skip?.[id];
      it(
        `[${id}] ${title}`,
        async (context) => {
          if (skipReason) return context.skip(`skipped by the adapter: ${skipReason}`);
          await ensureAvailable(context);
          await body(context);
        },
        timeoutMs,
      );
    },
    createSandbox(extra) {
      return createSandbox(provider, mergeCreateOptions(options.createOptions, extra));
    },
  };
}

/** Merges create options the way the harness does (exported for fixtures and groups). */
export { mergeCreateOptions };

/** Runs `work` and asserts it rejects with an sbx error of `code`; returns the error for further checks. Never asserts messages. */
export async function expectSbxError<Code extends SbxErrorCode>(
  work: Promise<unknown> | (() => Promise<unknown> | unknown),
  code: Code,
): Promise<SbxError> {
  let outcome: unknown;
  try {
    outcome = await (typeof work === "function" ? work() : work);
  } catch (error) {
    if (!isSbxError(error, code)) {
      const seen = isSbxError(error) ? `${error.code} (${error.name})` : error instanceof Error ? `${error.name}: ${error.message}` : String(error);
      expect.fail(`expected an sbx error with code ${code}, got ${seen}`);
    }
    return error;
  }
  expect.fail(`expected an sbx error with code ${code}, but the call succeeded with ${describeValue(outcome)}`);
}

function describeValue(value: unknown): string {
  try {
    return JSON.stringify(value)?.slice(0, 200) ?? String(value);
  } catch {
    return String(value);
  }
}

/** Asserts a `CapabilityNotSupportedError` names the capability and the right `supportedBy` (never the backend itself). */
export async function expectCapabilityRefused(
  harness: ContractHarness,
  work: Promise<unknown> | (() => Promise<unknown> | unknown),
  capability: CapabilityName | `language:${string}`,
): Promise<SbxError> {
  const error = await expectSbxError(work, "SBX_CAPABILITY_NOT_SUPPORTED");
  const details = error as SbxError & { capability?: string; supportedBy?: string[] };
  expect(details.capability).toBe(capability);
  expect(details.backend).toBe(harness.provider.backend);
  expect(details.supportedBy).toEqual(backendsSupporting(capability, harness.provider.backend));
  expect(details.supportedBy).not.toContain(harness.provider.backend);
  return error;
}

/** A provider that counts `create` calls, to prove a refusal happened before anything was created. */
export function countingProvider(provider: SandboxProviderV1): { provider: SandboxProviderV1; creates: () => number; createdIds: () => string[] } {
  let creates = 0;
  const createdIds: string[] = [];
  const proxy = new Proxy(provider, {
    get(target, property) {
      const value = Reflect.get(target, property, target) as unknown;
      if (property === "create") {
        return async (...args: Parameters<SandboxProviderV1["create"]>) => {
          creates++;
          const driver = await target.create(...args);
          createdIds.push(driver.id);
          return driver;
        };
      }
      return typeof value === "function" ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
  return { provider: proxy, creates: () => creates, createdIds: () => [...createdIds] };
}

/** Wraps a group's registration in a `describe` block, for the exported stand-alone group functions. */
export function describeGroup(
  title: string,
  name: string,
  factory: SandboxProviderFactoryForContract,
  options: SandboxContractOptions | undefined,
  register: (harness: ContractHarness) => void,
): void {
  describe(`sbx contract: ${name} › ${title}`, () => register(createContractHarness(name, factory, options)));
}

/** Validates a manifest (re-exported for the manifest group). */
export function parseManifest(capabilities: unknown): Capabilities {
  return capabilitiesSchema.parse(capabilities) as Capabilities;
}

/** Waits `milliseconds` (used only to let a killed process's would-be effects happen, never to assert speed). */
export function delay(milliseconds: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, milliseconds));
}
