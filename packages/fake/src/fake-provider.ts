import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import type { BackendStatus, Capabilities, ListedSandbox, SandboxProviderV1, SandboxSnapshot } from "@sbx/core";
import {
  narrowCapabilities,
  type DriverAudit,
  type ProviderCreateRequest,
  type ResolvedCreateOptions,
  type SandboxDriverV1,
  REDACTED,
  throwIfAborted,
} from "@sbx/core/adapter";
import { CallRecord, type FakeCall } from "./call-record.js";
import { describeEgressEnforcement } from "./egress-fetch.js";
import { FAKE_CAPABILITIES } from "./fake-capabilities.js";
import { fakeDirectory } from "./fake-directory.js";
import { fakeSnapshots } from "./fake-snapshots.js";
import { FakeDriver } from "./fake-driver.js";
import { fakeSettingsSchema, resolveFakeSettings, type FakeSettings, type ResolvedFakeSettings } from "./fake-settings.js";
import { FaultInjector } from "./fault-injector.js";
import { sharedPythonInterpreters } from "./python-interpreters.js";

/** Said in every fake sandbox's audit notes. */
export const NOT_A_SECURITY_BOUNDARY_NOTE =
  "The fake is NOT a security boundary: commands (just-bash), Python (Pyodide) and file operations run inside this Node.js process with its privileges. Use it for tests and offline development only, never for untrusted code.";

const versions = new Map<string, string>();

/** The installed version of a dependency, read from its package.json (found by walking up from its entry point). */
function packageVersion(name: string): string {
  const known = versions.get(name);
  if (known) return known;
  let version = "unknown";
  try {
    let directory = dirname(createRequire(import.meta.url).resolve(name));
    for (let depth = 0; depth < 6; depth++) {
      try {
        const manifest = JSON.parse(readFileSync(join(directory, "package.json"), "utf8")) as { name?: string; version?: string };
        if (manifest.name === name && manifest.version) {
          version = manifest.version;
          break;
        }
      } catch {
        // keep walking up
      }
      directory = dirname(directory);
    }
  } catch {
    // not resolvable: "unknown"
  }
  versions.set(name, version);
  return version;
}

/** The fake provider: a real sbx backend running in this process, with fault injection, handlers and a call record. */
export interface FakeSandboxProvider extends SandboxProviderV1 {
  /** Deterministic fault injection: `failNextCreate`, `timeOutNextCommand`, `timeOutNextCode`, `loseSandbox`. */
  readonly faults: FaultInjector;
  /** Every create, command, runCode, code-context and file call so far, oldest first, secret values redacted. */
  readonly calls: readonly FakeCall[];
  /** Forgets recorded calls. */
  clearCalls(): void;
  /** Ids of the sandboxes of this provider that are alive. */
  readonly liveSandboxIds: readonly string[];
}

class FakeProvider implements FakeSandboxProvider {
  readonly specificationVersion = "sbx-v1" as const;
  readonly backend = "fake";
  readonly packageName = "@sbx/fake";
  readonly isolating = false;
  /** The settings this provider knows; core refuses any other `settings` key (ADR 0029). */
  readonly settingsSchema = fakeSettingsSchema;
  readonly capabilities: Capabilities;
  readonly faults: FaultInjector;
  private readonly record = new CallRecord();
  private readonly drivers = new Map<string, FakeDriver>();
  private readonly settings: ResolvedFakeSettings;
  private sequence = 0;
  /** Lists this process's fake sandboxes by label: present exactly when `LIST_SANDBOXES` is on (ADR 0050). */
  readonly list?: (request: { labels: Readonly<Record<string, string>> }) => Promise<ListedSandbox[]>;
  /** Get-or-create by name within this process: present exactly when `NAMED_SANDBOXES` is on (ADR 0050). */
  readonly getOrCreate?: (request: ProviderCreateRequest & { name: string }) => Promise<{ driver: SandboxDriverV1; created: boolean }>;
  /** This process's fake snapshots: present exactly when `SNAPSHOTS` is on (ADR 0056). */
  readonly listSnapshots?: () => Promise<SandboxSnapshot[]>;
  /** Deletes one of this process's fake snapshots: present exactly when `SNAPSHOTS` is on (ADR 0056). */
  readonly deleteSnapshot?: (request: { id: string }) => Promise<boolean>;

  constructor(settings: ResolvedFakeSettings) {
    this.settings = settings;
    this.capabilities = narrowCapabilities(FAKE_CAPABILITIES, settings.capabilities);
    this.faults = new FaultInjector((sandboxId) => this.drivers.get(sandboxId)?.killAll());
    if (this.capabilities.LIST_SANDBOXES) this.list = (request) => Promise.resolve(fakeDirectory.list(request.labels));
    if (this.capabilities.NAMED_SANDBOXES)
      this.getOrCreate = (request) => fakeDirectory.getOrCreate(request.name, () => this.createNamed(request, request.name));
    if (this.capabilities.SNAPSHOTS) {
      this.listSnapshots = () => Promise.resolve(fakeSnapshots.list());
      this.deleteSnapshot = (request) => Promise.resolve(fakeSnapshots.delete(request.id));
    }
  }

  get calls(): readonly FakeCall[] {
    return this.record.list();
  }

  clearCalls(): void {
    this.record.clear();
  }

  get liveSandboxIds(): readonly string[] {
    return [...this.drivers.keys()];
  }

  async detect(): Promise<BackendStatus> {
    return {
      backend: "fake",
      usable: true,
      reason: `in-process fake (just-bash ${packageVersion("just-bash")}, pyodide ${packageVersion("pyodide")}); not a security boundary`,
      remedy: "",
      isolating: false,
    };
  }

  create(request: ProviderCreateRequest): Promise<SandboxDriverV1> {
    return this.createNamed(request, null);
  }

  private async createNamed(request: ProviderCreateRequest, name: string | null): Promise<SandboxDriverV1> {
    const { options } = request;
    const secrets = Object.values(options.secrets);
    this.record.add(
      "create",
      null,
      "create",
      { target: request.target, options: { ...options, secrets: Object.fromEntries(Object.keys(options.secrets).map((name) => [name, REDACTED])) } },
      secrets,
    );
    throwIfAborted(request.signal, "fake");
    this.faults.takeCreateFailure();
    this.sequence += 1;
    const id = `fake-${this.sequence}-${crypto.randomUUID().slice(0, 8)}`;
    const driver = new FakeDriver({
      id,
      options,
      settings: this.settings,
      statefulCode: this.capabilities.STATEFUL_CODE,
      calls: this.record,
      faults: this.faults,
      python: sharedPythonInterpreters,
      audit: this.auditFor(options),
      onDestroyed: (sandboxId) => {
        this.drivers.delete(sandboxId);
        fakeDirectory.remove(sandboxId);
      },
    });
    await driver.initialise();
    this.drivers.set(id, driver);
    fakeDirectory.add(driver, options.metadata, name);
    if (this.settings.preloadPython && this.capabilities.languages.includes("python")) sharedPythonInterpreters().warm();
    return driver;
  }

  private auditFor(options: ResolvedCreateOptions): DriverAudit {
    const mounts = options.mounts;
    return {
      backendVersion: `just-bash ${packageVersion("just-bash")}; pyodide ${packageVersion("pyodide")}`,
      policies: {
        network: { requested: options.network, applied: options.network, enforcement: describeEgressEnforcement(options.network) },
        limits: {
          requested: options.limits ?? null,
          applied: null,
          enforcement:
            "none: the fake runs in this process and enforces no CPU, memory or process limits (RESOURCE_LIMITS is off, so limits are refused)",
        },
        mounts: {
          requested: mounts,
          applied: mounts,
          enforcement:
            mounts.length === 0
              ? "no host folders mounted"
              : "in-process: read-only mounts are just-bash OverlayFs with readOnly (writes fail with EROFS), read-write mounts are just-bash ReadWriteFs (writes reach the host folder); runCode works on a copy synced before and after each run",
        },
        user: {
          requested: options.user,
          applied: "not applicable",
          enforcement: "not applicable: the fake has no operating-system users; everything runs as the host Node.js process",
        },
        lifetime: {
          requested: options.timeoutMs,
          applied: options.timeoutMs,
          enforcement: "in-process timer: the sandbox is destroyed after timeoutMs, but only while this process lives (it dies with the process)",
        },
      },
      notes: [
        NOT_A_SECURITY_BOUNDARY_NOTE,
        "Commands run in just-bash, a bash interpreter written in TypeScript: a subset of bash and coreutils, no real processes; a script runs as one exec (shell state such as $?, PIPESTATUS and set -e/pipefail carries as in bash), its output streams per top-level statement, a top-level '&' job runs in the background (elsewhere '&' runs in order) and a top-level 'trap … EXIT' runs when the script ends. The shell is bash (Docker images run sh, often dash).",
        "Python in commands is just-bash's CPython (WebAssembly, no network); runCode outside a context uses one Pyodide interpreter shared by the process (loaded in the background when a sandbox is created), and every code context has a Pyodide interpreter of its own, so a run that cannot be interrupted loses only its context.",
        "Command output crosses from just-bash as strings with no mark of text or bytes: raw bytes that are not valid UTF-8 are recovered by a heuristic that can misread them when mixed with text in one statement; printf escapes above \\177 are written as characters and python3's binary stdout is decoded with replacement characters by the engine (see the fake's README).",
      ],
    };
  }
}

/**
 * Creates the fake provider. Used by `createSandbox("fake://")`; pass it to `createSandbox(provider)` to keep a
 * handle on `faults` and `calls`. Settings are validated: a bad field raises `InvalidArgumentError` naming it.
 * @example
 * const provider = createSandboxProvider({ capabilities: { STATEFUL_CODE: false } });
 * const sandbox = await createSandbox(provider);
 */
export function createSandboxProvider(settings?: FakeSettings | Record<string, unknown>): FakeSandboxProvider {
  return new FakeProvider(resolveFakeSettings(settings));
}

/** Friendly alias of `createSandboxProvider`: `createSandbox(fake({ handlers }))`. */
export const fake = createSandboxProvider;
