import { SandboxClosedError, SandboxNotFoundError, SandboxPausedError, SbxError } from "../errors/index.js";
import { startCallLog } from "../backends/backend-logging.js";
import { adapterFailure } from "../security/guard.js";
import type { SandboxLogger } from "../v1/logging.js";
import type { DriverAudit, SandboxDriverV1 } from "../v1/provider.js";
import { resolveDriverMethods, type ResolvedDriverMethods } from "./driver-methods.js";
import { askProbe, isAmbiguousFailure, lostAfterProbe } from "./loss-probe.js";

/** The driver methods a log line names. */
export type LoggedMethod =
  "spawn" | "runCode" | "createCodeContext" | "readFile" | "writeFile" | "list" | "stat" | "remove" | "mkdir" | "rename" | "destroy";

/** How one call through the channel is described. */
export interface ChannelCallOptions {
  /** The driver method called, when the call is one the debug logger shows (with `detail`). Default: not logged. */
  readonly method?: LoggedMethod;
  /** What the call was about for the log line (a command line, a path); never environment values or file contents. */
  readonly detail?: string;
  /**
   * The signal core gave the work. Once it fired (core itself stopped the work: a deadline, an abort, a kill), a
   * failure is expected and the driver's `probe()` is not asked. Default: none.
   */
  readonly signal?: AbortSignal;
}

/** The sandbox's credentials, as far as the channel deals with them (see `SandboxCredentials`). */
export interface ChannelCredentials {
  /** Issued values to add to every spawn request's `secretValues`. */
  secretValues(): readonly string[];
  /** Told of every `SandboxNotFoundError` a call ends with: revocation starts. */
  noticeError(error: unknown): void;
  /** Revokes every credential after the sandbox was destroyed; rejects with `CredentialRevocationError`. */
  revokeAllOrThrow(reason: "kill"): Promise<void>;
}

/** What the channel needs besides the driver. */
export interface DriverChannelOptions {
  /** Backend name, for errors and log lines. */
  readonly backend: string;
  /** Secret values: removed from every error and log line. */
  readonly secretValues: readonly string[];
  /** The debug logger, when one is on. */
  readonly logger?: SandboxLogger;
  /** The sandbox's scoped credentials, when it has any. */
  readonly credentials?: ChannelCredentials;
  /** Told once, when the sandbox is first marked lost (not while it is being killed). Default: nothing. */
  readonly onLost?: () => void;
}

/**
 * The call channel (ADR 0037): the one way core calls a sandbox's driver. Made once per sandbox, it resolves which
 * method serves each operation (the driver's own, core's POSIX default over `spawn`, or the sandbox agent's) and
 * exposes them under the driver's names; `call` runs one call and applies, in one place, what every call needs:
 * only sbx errors escape (anything else is a `ProviderError`), secrets redacted, the debug log line, the credentials'
 * notice of a lost sandbox, and the open/closed/lost state. The lost-sandbox rule: a driver's `SandboxNotFoundError`
 * marks the sandbox lost; an ambiguous failure (see `isAmbiguousFailure`) makes core ask the driver's `probe()` once,
 * bounded, and `"gone"` turns it into `SandboxNotFoundError`; any other answer leaves the failure as it was.
 */
export class DriverChannel implements ResolvedDriverMethods {
  /** Backend-assigned id. */
  readonly id: string;
  /** Absolute workspace path. */
  readonly workspace: string;
  /** Variables every process gets beneath the caller's (the driver's `baseEnvironment`), empty without. */
  readonly baseEnvironment: Readonly<Record<string, string>>;
  readonly spawn: ResolvedDriverMethods["spawn"];
  readonly readFile: ResolvedDriverMethods["readFile"];
  readonly writeFile: ResolvedDriverMethods["writeFile"];
  readonly stat: ResolvedDriverMethods["stat"];
  readonly list: ResolvedDriverMethods["list"];
  readonly remove: ResolvedDriverMethods["remove"];
  readonly mkdir: ResolvedDriverMethods["mkdir"];
  readonly rename: ResolvedDriverMethods["rename"];
  readonly runCode: ResolvedDriverMethods["runCode"];
  readonly createCodeContext: ResolvedDriverMethods["createCodeContext"];
  readonly probe: ResolvedDriverMethods["probe"];
  readonly watchFiles: ResolvedDriverMethods["watchFiles"];
  readonly openTerminal: ResolvedDriverMethods["openTerminal"];
  readonly agent: ResolvedDriverMethods["agent"];
  readonly openPortConnection: ResolvedDriverMethods["openPortConnection"];
  readonly destroy: ResolvedDriverMethods["destroy"];
  /** ISO time the sandbox was closed (killed, disposed or lost), or null while open. */
  closedAt: string | null = null;
  /** The kill in progress or done, once `kill()` was called. */
  killing: Promise<void> | undefined;
  /**
   * True while the sandbox is paused or being paused (`sandbox.pause()`, ADR 0055): `ensureOpen` refuses every
   * operation but those that say they work while paused. The one gate every call path of core passes.
   */
  paused = false;
  /** Set when the sandbox was found gone: every later call reports the same. */
  private lostError: SbxError | undefined;
  /** The probe in flight, shared by failures that arrive together. */
  private probing: ReturnType<typeof askProbe> | undefined;

  constructor(
    /** The driver the adapter made. */
    readonly driver: SandboxDriverV1,
    private readonly options: DriverChannelOptions,
  ) {
    this.id = driver.id;
    this.workspace = driver.workspace;
    this.baseEnvironment = { ...driver.baseEnvironment };
    const { credentials } = options;
    const methods = resolveDriverMethods(driver, {
      backend: options.backend,
      spawnSecretValues: credentials ? () => credentials.secretValues() : undefined,
    });
    this.spawn = methods.spawn;
    this.readFile = methods.readFile;
    this.writeFile = methods.writeFile;
    this.stat = methods.stat;
    this.list = methods.list;
    this.remove = methods.remove;
    this.mkdir = methods.mkdir;
    this.rename = methods.rename;
    this.runCode = methods.runCode;
    this.createCodeContext = methods.createCodeContext;
    this.probe = methods.probe;
    this.watchFiles = methods.watchFiles;
    this.openTerminal = methods.openTerminal;
    this.agent = methods.agent;
    this.openPortConnection = methods.openPortConnection;
    this.destroy = credentials
      ? async () => {
          try {
            await methods.destroy();
          } finally {
            // Revoke even when destroying failed: a credential must not outlive a sandbox that may be going away.
            await credentials.revokeAllOrThrow("kill");
          }
        }
      : methods.destroy;
  }

  /** What the provider recorded at create (read from the driver each time). */
  get audit(): DriverAudit {
    return this.driver.audit;
  }

  /** The backend's own object for the sandbox, for the adapter's escape hatch. */
  get native(): unknown {
    return this.driver.native;
  }

  /** True once the sandbox was found gone. */
  get lost(): boolean {
    return this.lostError !== undefined;
  }

  /**
   * Runs one driver call through the channel: its result passes through; its failure leaves as an sbx error with
   * secrets redacted, after the lost-sandbox rule (see the class) and the debug log line. `kill()`'s own calls
   * never mark the sandbox lost (it is going away anyway).
   */
  readonly call = async <Result>(operation: string, work: () => Promise<Result>, callOptions?: ChannelCallOptions): Promise<Result> => {
    const { logger, backend, secretValues } = this.options;
    const finishLog =
      logger && callOptions?.method
        ? startCallLog(logger, secretValues, { backend, operation: callOptions.method, sandboxId: this.id, detail: callOptions.detail })
        : undefined;
    try {
      const result = await work();
      finishLog?.("ok");
      return result;
    } catch (thrown) {
      const failure = await this.settleFailure(operation, adapterFailure(thrown, backend, operation, secretValues), callOptions?.signal);
      finishLog?.("error", failure);
      throw failure;
    }
  };

  /**
   * A stream the driver returned, read by the caller after the call itself returned (`files.read` as a stream): its
   * failures pass through the same rule as a call's (an sbx error, secrets redacted, the lost-sandbox rule).
   */
  readonly watchStream = (operation: string, stream: ReadableStream<Uint8Array>): ReadableStream<Uint8Array> => {
    const { backend, secretValues } = this.options;
    const reader = stream.getReader();
    return new ReadableStream<Uint8Array>({
      pull: async (controller) => {
        try {
          const next = await reader.read();
          if (next.done) controller.close();
          else controller.enqueue(next.value);
        } catch (thrown) {
          controller.error(await this.settleFailure(operation, adapterFailure(thrown, backend, operation, secretValues), undefined));
        }
      },
      cancel: (reason) => reader.cancel(reason).catch(() => {}),
    });
  };

  /** Applies the lost-sandbox rule to a failed call's error and returns what the call reports. */
  private async settleFailure(operation: string, failure: SbxError, signal: AbortSignal | undefined): Promise<SbxError> {
    if (isSandboxGone(failure)) return this.noticeGone(failure);
    if (!isAmbiguousFailure(failure)) return failure;
    const { backend, secretValues } = this.options;
    // A sandbox already found gone explains an ambiguous failure of a call that was in flight: it is gone too.
    if (this.lostError) return adapterFailure(lostAfterProbe(failure, { backend, sandboxId: this.id, operation }), backend, operation, secretValues);
    if (this.killing || signal?.aborted || !this.probe) return failure;
    const probe = this.probe;
    this.probing ??= askProbe(probe).finally(() => {
      this.probing = undefined;
    });
    if ((await this.probing) !== "gone") return failure;
    return this.noticeGone(adapterFailure(lostAfterProbe(failure, { backend, sandboxId: this.id, operation }), backend, operation, secretValues));
  }

  /**
   * Marks the sandbox lost (unless it is being killed or already closed) and tells the credentials; returns `error`.
   * Core's own findings come here too: the lifetime's end and a periodic probe that answered `"gone"` (ADR 0045).
   */
  readonly noticeGone = (error: SbxError): SbxError => {
    this.markLost(error);
    this.options.credentials?.noticeError(error);
    return error;
  };

  /**
   * Marks the sandbox lost without telling the credentials: for the lifetime's end, whose revocation the credentials'
   * own lifetime timer does (with the reason `"lifetime"`).
   */
  readonly markLost = (error: SbxError): void => {
    if (this.lostError || this.killing) return;
    this.lostError = error;
    this.closedAt ??= new Date().toISOString();
    this.options.onLost?.();
  };

  /**
   * Throws `SandboxNotFoundError` for a lost sandbox, `SandboxClosedError` for a closed one, and `SandboxPausedError`
   * for a paused one unless `whilePaused` says the operation works then (`setLifetime`, `resume`).
   */
  readonly ensureOpen = (operation: string, options?: { whilePaused?: boolean }): void => {
    const { backend } = this.options;
    if (this.lostError)
      throw new SandboxNotFoundError({
        sandboxId: this.id,
        backend,
        cause: this.lostError,
        message: `Cannot ${operation}: sandbox ${this.id} is gone (it was removed outside sbx, or its lifetime ended). Create a new sandbox.`,
      });
    if (this.closedAt !== null) throw new SandboxClosedError({ sandboxId: this.id, operation, backend });
    if (this.paused && options?.whilePaused !== true) throw new SandboxPausedError({ sandboxId: this.id, operation, backend });
  };
}

/** True for a report that the sandbox is gone (from any copy of `@sbx/core`). */
export function isSandboxGone(error: unknown): error is SbxError {
  return SbxError.isInstance(error) && error.code === "SBX_SANDBOX_NOT_FOUND";
}
