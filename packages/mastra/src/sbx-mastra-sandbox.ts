import { randomUUID } from "node:crypto";
import { createSandbox, DEFAULT_OUTPUT_LIMIT_BYTES, isSbxError, type CreateSandboxOptions, type Sandbox, type TimeoutError } from "@sbx/core";
import {
  MastraSandbox,
  SandboxAbortError,
  type CommandResult,
  type ExecuteCommandOptions,
  type ProviderStatus,
  type SandboxInfo,
  type WorkspaceSandbox,
} from "@mastra/core/workspace";
import { RetainedOutput } from "./retained-output.js";
import { shellQuote } from "./shell-quote.js";

/** Default `commandTimeoutMs`: five minutes. */
export const DEFAULT_COMMAND_TIMEOUT_MS = 300_000;

/** Exit code reported for a command stopped at its time limit, as Mastra's local sandbox reports it (and `timeout(1)`). */
export const TIMED_OUT_EXIT_CODE = 124;

/** Where the sandbox comes from: created on `start()` from a target, or one that already exists. */
export type SbxMastraSandboxSource =
  | {
      /** `createSandbox` target: `"docker://python:3.12-slim"`, `"fake://"`, a provider, or `"auto"`. */
      target: Parameters<typeof createSandbox>[0];
      /** sbx create options (network policy, lifetime, limits, env, secrets). */
      createOptions?: CreateSandboxOptions;
    }
  | {
      /** An sbx sandbox that already exists. */
      sandbox: Sandbox;
    };

/** Options of `SbxMastraSandbox`. */
export type SbxMastraSandboxOptions = SbxMastraSandboxSource & {
  /**
   * Time limit of a command that gives no `timeout`, in milliseconds. Default 300000 (five minutes). Why: sbx has no
   * default command timeout, and a command left waiting would otherwise run until the sandbox's lifetime ends.
   */
  commandTimeoutMs?: number;
  /**
   * Most bytes of each stream kept in a result when the call gives no `maxRetainedBytes` (the newest are kept, as
   * Mastra defines retention). Default `DEFAULT_OUTPUT_LIMIT_BYTES` (16 MiB): Mastra's own default is "everything",
   * which sbx never holds for output a sandbox controls; what is dropped is reported (`stdoutTruncated`,
   * `stdoutDroppedBytes`).
   */
  maxRetainedBytes?: number;
};

/**
 * A Mastra `WorkspaceSandbox` (on `MastraSandbox`) over any sbx sandbox: Docker, E2B, Modal, the fake or any adapter.
 * Give it to `new Workspace({ sandbox })`; Mastra's agent then gets `workspace_execute_command` in the sandbox.
 * `executeCommand` streams through `onStdout`/`onStderr`, stops on `abortSignal`, runs under `timeout` (or
 * `commandTimeoutMs`), and keeps the newest `maxRetainedBytes` of each stream.
 */
export class SbxMastraSandbox extends MastraSandbox implements WorkspaceSandbox {
  /** The sbx sandbox id once started (a logical id before that, for a sandbox created on `start()`). */
  readonly id: string;
  /** Shown in Mastra's tooling. */
  readonly name = "sbx";
  /** Mastra's provider identifier. */
  readonly provider = "sbx";
  /** Mastra's lifecycle status, kept by `MastraSandbox`'s wrappers. */
  status: ProviderStatus = "pending";
  readonly #source: SbxMastraSandboxSource;
  readonly #commandTimeoutMs: number;
  readonly #maxRetainedBytes: number;
  readonly #createdAt = new Date();
  #sandbox: Sandbox | undefined;

  constructor(options: SbxMastraSandboxOptions) {
    super({ name: "sbx" });
    this.#source = options;
    this.#commandTimeoutMs = options.commandTimeoutMs ?? DEFAULT_COMMAND_TIMEOUT_MS;
    this.#maxRetainedBytes = options.maxRetainedBytes ?? DEFAULT_OUTPUT_LIMIT_BYTES;
    if ("sandbox" in options) {
      this.#sandbox = options.sandbox;
      this.id = options.sandbox.id;
      this.setWorkingDirectory(options.sandbox.workspace);
    } else {
      this.id = `sbx-${randomUUID()}`;
    }
  }

  /** The sbx sandbox underneath (after `start()`); throws before. */
  get sandbox(): Sandbox {
    if (!this.#sandbox) throw new Error("The sbx sandbox is not started yet: call start() (Mastra's workspace does on first use).");
    return this.#sandbox;
  }

  /** Creates the sbx sandbox (for a target) and sets the working directory to its workspace. */
  override async start(): Promise<void> {
    if (!this.#sandbox && "target" in this.#source) this.#sandbox = await createSandbox(this.#source.target, this.#source.createOptions);
    this.setWorkingDirectory(this.sandbox.workspace);
  }

  /** Kills the sbx sandbox (sbx has no pause: a destroyed sandbox and its files are gone). */
  override async destroy(): Promise<void> {
    await this.#sandbox?.kill();
  }

  /** What the agent is told about where its commands run. */
  override getInstructions(): string {
    if (!this.#sandbox) return "Commands run in an isolated sbx sandbox with sh -c.";
    const sandbox = this.#sandbox;
    return [
      `Commands run in an isolated ${sandbox.backend} sandbox (sbx) with sh -c, in ${sandbox.workspace} unless cwd is given.`,
      sandbox.audit().isolating === false ? "This backend is an in-process fake for tests, not a security boundary." : "",
    ]
      .filter(Boolean)
      .join(" ");
  }

  /** Id, status and the sbx backend, sandbox id and workspace. */
  override getInfo(): SandboxInfo {
    return {
      id: this.id,
      name: this.name,
      provider: this.provider,
      status: this.status,
      createdAt: this.#createdAt,
      metadata: this.#sandbox ? { backend: this.#sandbox.backend, sandboxId: this.#sandbox.id, workspace: this.#sandbox.workspace } : {},
    };
  }

  /**
   * Runs `command` (with `args` shell-quoted after it) with `sh -c`. A non-zero exit code is a result. Past `timeout`
   * the command and everything it started are killed and the result says `timedOut` (exit code 124, as Mastra's local
   * sandbox); an aborted `abortSignal` rejects with Mastra's `SandboxAbortError`; a throw (or rejection) from
   * `onStdout`/`onStderr` stops the command and rejects with it.
   */
  override async executeCommand(command: string, args: string[] = [], options: ExecuteCommandOptions = {}): Promise<CommandResult> {
    await this.ensureRunning();
    const sandbox = this.sandbox;
    const line = args.length > 0 ? `${command} ${args.map(shellQuote).join(" ")}` : command;
    const retainedLimit = Math.min(options.maxRetainedBytes ?? this.#maxRetainedBytes, this.#maxRetainedBytes);
    const stdout = new RetainedOutput(retainedLimit);
    const stderr = new RetainedOutput(retainedLimit);
    const stop = new AbortController();
    let callbackError: { error: unknown } | undefined;
    const forward = (retained: RetainedOutput, listener: ((text: string) => void | Promise<void>) | undefined) => (text: string) => {
      retained.append(text);
      if (!listener) return;
      const failed = (error: unknown) => {
        callbackError ??= { error };
        stop.abort(error);
      };
      try {
        const pending = listener(text) as unknown;
        if (pending instanceof Promise) pending.catch(failed);
      } catch (error) {
        failed(error);
      }
    };
    const signal = options.abortSignal ? AbortSignal.any([options.abortSignal, stop.signal]) : stop.signal;
    const started = Date.now();
    const result = { command, args };
    try {
      const finished = await sandbox.commands.run(line, {
        cwd: options.cwd,
        // Mastra's runtime overlay (`setEnv`) first, the call's own variables over it.
        env: { ...definedEnvironment(this.getEnv()), ...definedEnvironment(options.env) },
        timeoutMs: options.timeout ?? this.#commandTimeoutMs,
        // The result's output is kept here (newest bytes, Mastra's rule); sbx's own copy would keep the oldest.
        outputLimitBytes: 1,
        onStdout: forward(stdout, options.onStdout),
        onStderr: forward(stderr, options.onStderr),
        signal,
      });
      if (callbackError) throw callbackError.error;
      return {
        ...result,
        success: finished.exitCode === 0,
        exitCode: finished.exitCode,
        stdout: stdout.text(),
        stderr: stderr.text(),
        executionTimeMs: finished.durationMs,
        ...retention(stdout, stderr),
      };
    } catch (error) {
      if (callbackError) throw callbackError.error;
      if (isSbxError(error, "SBX_ABORTED")) throw new SandboxAbortError("command", options.abortSignal?.reason);
      if (!isSbxError(error, "SBX_TIMEOUT")) throw error;
      const timeout = error as TimeoutError;
      stderr.append(
        `\nsbx: the command ran past ${timeout.timeoutMs} ms and ${timeout.killed ? "was killed" : "was told to stop (the kill was not confirmed)"}`,
      );
      return {
        ...result,
        success: false,
        exitCode: TIMED_OUT_EXIT_CODE,
        stdout: stdout.text(),
        stderr: stderr.text(),
        executionTimeMs: Date.now() - started,
        timedOut: true,
        killed: timeout.killed,
        ...retention(stdout, stderr),
      };
    }
  }
}

/** Mastra passes `NodeJS.ProcessEnv` (values may be undefined); sbx takes strings. */
function definedEnvironment(environment: NodeJS.ProcessEnv | undefined): Record<string, string> | undefined {
  if (!environment) return undefined;
  return Object.fromEntries(Object.entries(environment).filter((entry): entry is [string, string] => typeof entry[1] === "string"));
}

function retention(stdout: RetainedOutput, stderr: RetainedOutput): Partial<CommandResult> {
  return {
    ...(stdout.droppedBytes > 0 ? { stdoutTruncated: true, stdoutDroppedBytes: stdout.droppedBytes } : {}),
    ...(stderr.droppedBytes > 0 ? { stderrTruncated: true, stderrDroppedBytes: stderr.droppedBytes } : {}),
  };
}
