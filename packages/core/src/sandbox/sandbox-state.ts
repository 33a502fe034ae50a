import { CapabilityNotSupportedError, InvalidArgumentError, SandboxNotFoundError, type SbxError, TooManyProcessesError } from "../errors/index.js";
import { DriverChannel, isSandboxGone } from "../channel/driver-channel.js";
import { backendsSupporting } from "../backends/backend-registry.js";
import type { Capabilities, CapabilityName } from "../v1/capabilities.js";
import type { SandboxDriverV1, SpawnedProcess } from "../v1/provider.js";
import type { SandboxContext } from "./sandbox-context.js";
import { DEFAULT_KILL_GRACE_MS } from "../limits/deadline.js";
import { defaultEnvironment } from "./default-environment.js";
import { resolveWorkspacePath } from "../security/paths.js";
import { redactError } from "../security/redaction.js";
import { refuseUnredactableSecrets } from "../security/unredactable-secrets.js";
import { maxLiveProcessesOf } from "../limits/live-process-limit.js";
import { SandboxEndWatch } from "./sandbox-end.js";

/**
 * What every part of one sandbox shares (commands, code, files, kill): the call channel to the driver (which holds the
 * open/closed/lost state and the rule that only sbx errors with secrets redacted leave a backend call, ADR 0037), the
 * environment, the capability checks and the process slots.
 */
export class SandboxState {
  /** The backend's name, for errors. */
  readonly backend: string;
  /** The backend's capability manifest. */
  readonly capabilities: Capabilities;
  /** The secret values, for redaction. */
  readonly secretValues: readonly string[];
  /** How long a backend gets to confirm a kill (see `SandboxContext.killGraceMs`). */
  readonly killGraceMs: number;
  /** The driver's base environment, the sandbox env and its secrets: what a code channel of the backend's own sees. */
  readonly baseEnvironment: Readonly<Record<string, string>>;
  /**
   * What every spawn sees, merged once (ADR 0037): core's defaults (PATH, HOME, LANG), then the driver's base
   * environment (the egress proxy's variables), then the sandbox env and its secrets (the command's env goes on top).
   */
  readonly spawnEnvironment: Readonly<Record<string, string>>;
  /** ISO time the sandbox object was made. */
  readonly createdAt = new Date().toISOString();
  /** The one way to the driver: resolved methods under the driver's names, `call`, and the open/closed/lost state. */
  readonly driver: DriverChannel;
  /** Runs one driver call through the channel (see `DriverChannel.call`). */
  readonly call: DriverChannel["call"];
  /** Throws `SandboxNotFoundError` for a lost sandbox, `SandboxClosedError` for a closed one. */
  readonly ensureOpen: DriverChannel["ensureOpen"];
  /** Processes started and not yet finished, killed with the sandbox. */
  readonly liveProcesses = new Set<SpawnedProcess>();
  /** Commands being started (spawn not yet answered): they count against `maxLiveProcesses` too. */
  startingProcesses = 0;
  /** Decides and announces the sandbox's end (kill, lifetime, loss): `sandbox.ended` (ADR 0045). */
  readonly endWatch: SandboxEndWatch;
  /** Running file watches: their stop, and what ends them when the sandbox is killed (ADR 0049). */
  readonly liveWatches = new Map<() => Promise<void>, () => void>();
  /** Code context ids this sandbox object created, so an unknown `contextId` is refused by name. */
  readonly createdContexts = new Set<string>();

  constructor(
    givenDriver: SandboxDriverV1,
    readonly context: SandboxContext,
  ) {
    const { provider, options } = context;
    this.backend = provider.backend;
    this.capabilities = provider.capabilities;
    refuseUnredactableSecrets(options.secrets, this.backend);
    this.secretValues = Object.values(options.secrets);
    this.killGraceMs = context.killGraceMs ?? DEFAULT_KILL_GRACE_MS;
    const driver = new DriverChannel(givenDriver, {
      backend: this.backend,
      secretValues: this.secretValues,
      logger: context.logger,
      credentials: context.credentials,
      onLost: () => this.endWatch.end("lost"),
    });
    this.driver = driver;
    this.call = driver.call;
    this.ensureOpen = driver.ensureOpen;
    this.baseEnvironment = { ...driver.baseEnvironment, ...options.env, ...options.secrets };
    this.spawnEnvironment = { ...defaultEnvironment(driver.workspace), ...this.baseEnvironment };
    this.endWatch = new SandboxEndWatch({
      probe: driver.probe,
      lifetimeEndsAt: context.lifetimeEndsAt ?? (context.reconnected ? undefined : Date.now() + options.timeoutMs),
      onLifetimeEnd: () =>
        driver.markLost(
          new SandboxNotFoundError({
            sandboxId: driver.id,
            backend: this.backend,
            message: `The ${this.backend} sandbox ${driver.id} reached the end of its lifetime (timeoutMs ${options.timeoutMs} ms); the backend ends it. Create a new sandbox.`,
          }),
        ),
      onFoundGone: () =>
        driver.noticeGone(
          new SandboxNotFoundError({
            sandboxId: driver.id,
            backend: this.backend,
            message: `The ${this.backend} sandbox ${driver.id} is gone (the backend says it no longer exists: removed outside sbx, or its host ended). Create a new sandbox.`,
          }),
        ),
      busy: () => driver.killing !== undefined,
    });
  }

  /** True once the sandbox was found gone. */
  get lost(): boolean {
    return this.driver.lost;
  }

  /** ISO time it was closed (killed, disposed or lost), or null while open. */
  get closedAt(): string | null {
    return this.driver.closedAt;
  }

  set closedAt(value: string | null) {
    this.driver.closedAt = value;
  }

  /** The kill in progress or done, once `kill()` was called. */
  get killing(): Promise<void> | undefined {
    return this.driver.killing;
  }

  set killing(value: Promise<void> | undefined) {
    this.driver.killing = value;
  }

  /**
   * Takes one of the sandbox's `maxLiveProcesses` slots for a command about to start, or refuses with
   * `TooManyProcessesError` (adr/0030). Returns the release of the starting slot (call it once the spawn settled; the
   * live process then holds its slot in `liveProcesses` until it finishes).
   */
  reserveProcess(): () => void {
    const limit = maxLiveProcessesOf(this.context.options);
    if (this.liveProcesses.size + this.startingProcesses >= limit) throw new TooManyProcessesError({ backend: this.backend, limit });
    this.startingProcesses += 1;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.startingProcesses -= 1;
    };
  }

  /** Refuses a capability the backend does not declare, naming the backends that have it. */
  requireCapability(capability: CapabilityName, detail?: string): void {
    if (!this.capabilities[capability]) {
      throw new CapabilityNotSupportedError({ capability, backend: this.backend, supportedBy: backendsSupporting(capability, this.backend), detail });
    }
  }

  /** Refuses a language `runCode` does not accept here. */
  requireLanguage(language: string): void {
    const { languages } = this.capabilities;
    if (!languages.includes(language)) {
      throw new CapabilityNotSupportedError({
        capability: `language:${language}`,
        backend: this.backend,
        supportedBy: backendsSupporting(`language:${language}`, this.backend),
        detail: `runCode accepts ${languages.length > 0 ? languages.join(", ") : "no languages"} here`,
      });
    }
  }

  /** Runs `work`; anything it throws has the sandbox's secrets redacted. */
  redacting<Result>(work: () => Result): Result {
    try {
      return work();
    } catch (error) {
      throw redactError(error, this.secretValues);
    }
  }

  /** Resolves a caller's path; a refusal never carries a secret the path held (errors are redacted like every other). */
  workspacePath(path: unknown): string {
    if (typeof path !== "string")
      throw new InvalidArgumentError({
        field: "path",
        backend: this.backend,
        message: `Invalid path: expected a string relative to the workspace (or absolute inside it), got ${path === null ? "null" : typeof path}.`,
      });
    return this.redacting(() => resolveWorkspacePath(path, this.driver.workspace, this.backend));
  }
}

/** True for a driver's report that the sandbox is gone (from any copy of `@sbx/core`). */
export function isSandboxNotFound(error: unknown): error is SbxError {
  return isSandboxGone(error);
}
