import type { Sandbox as CodeInterpreterSandbox } from "@e2b/code-interpreter";
import type { CommandHandle } from "e2b";
import type { SbxError } from "@sbx/core";
import {
  type ProbeAnswer,
  type CodeRequest,
  type DriverAudit,
  type DriverCodeAgent,
  type DriverExecution,
  type SandboxDriverV1,
  type SpawnedProcess,
  type SpawnRequest,
  type DriverTerminal,
  type TerminalRequest,
  type DriverFileWatch,
  type WatchFilesRequest,
  posixFileOperations,
  KILL_PROCESS_TREE_SCRIPT,
  shellQuote,
} from "@sbx/core/adapter";
import { exitCodeOfEnd, processClientOf, startHeaders, type ProcessStartClient } from "./envd-process-stream.js";
import { setE2BLifetime } from "./e2b-lifetime.js";
import { mapE2BError } from "./map-e2b-error.js";
import { mapE2BExecutionError, mapE2BResult } from "./map-e2b-result.js";
import { startTerminal, terminalClientOf } from "./e2b-terminal.js";
import { watchE2BDirectory } from "./e2b-file-watch.js";
import { orderedStdinWriter } from "./ordered-stdin-writer.js";

/** The E2B sandbox's workspace: the default user's home, where the SDK and E2B templates put work. */
export const E2B_WORKSPACE = "/home/user";

/**
 * Connect deadline given to long-running envd streams (commands, code). The SDK's default is 60 s, which would
 * end every longer command; 0 means "already expired" to the Connect client, so the largest timer value is
 * used. Command and code time limits are core's, which kills the work and raises `TimeoutError`.
 */
export const NO_STREAM_DEADLINE_MS = 2_147_483_647;

/** Exit code reported for a command E2B reports as killed by a signal (E2B gives -1 without naming the signal). */
export const KILLED_EXIT_CODE = 128 + 9;

/** How long the envd health request of `probe()` may take, in milliseconds (core bounds the probe as well). */
export const LOST_SANDBOX_PROBE_TIMEOUT_MS = 5_000;

/** What `E2BDriver` needs besides the SDK sandbox. */
export interface E2BDriverOptions {
  /** The audit record made at create or connect. */
  readonly audit: DriverAudit;
  /** The Linux user commands and file operations run as: `undefined` for the template's default user, or `"root"`. */
  readonly user: "root" | undefined;
  /** Per-request timeout for envd calls, in milliseconds, when configured. */
  readonly requestTimeoutMs: number | undefined;
}

/**
 * The command as the shell runs it: first `cd` into the working directory, so a missing one is the shell's own
 * message and exit 126, a command result as on every backend (ADR 0020). envd is not given the `cwd`: it refuses to
 * start a process whose working directory is missing, which would surface as an error instead.
 */
function inWorkingDirectory(request: SpawnRequest): string {
  return `cd -- ${shellQuote(request.cwd)} || exit 126\n${request.command}`;
}

/**
 * One live E2B sandbox as an sbx driver: commands through envd's process API, reads and writes through envd's filesystem
 * API, code through the code interpreter, exposed ports through the sbx agent (ADR 0060). Every SDK error is mapped by
 * `mapE2BError`.
 */
export class E2BDriver implements SandboxDriverV1 {
  readonly id: string;
  readonly workspace = E2B_WORKSPACE;
  readonly audit: DriverAudit;
  /**
   * The sbx agent, started by core through `spawn` (one envd process, stdin kept open) on the first exposed-port
   * connection: it gives `openPortConnection` (its `connect` operation, ADR 0053, ADR 0060). Code, terminals and file
   * watching stay this driver's own (the code interpreter, envd's PTY and `WatchDir`: a driver's own method wins), and
   * commands stay on envd (`commands: "driver"`).
   */
  readonly codeAgent: DriverCodeAgent = { commands: "driver" };
  private destroyed: Promise<void> | undefined;
  private readonly encoder = new TextEncoder();
  private readonly contexts = new Map<string, { id: string; language: string; cwd: string }>();

  constructor(
    private readonly sandbox: CodeInterpreterSandbox,
    private readonly options: E2BDriverOptions,
  ) {
    this.id = sandbox.sandboxId;
    this.audit = options.audit;
  }

  /** The SDK's sandbox object, for the adapter's escape hatch (outside the portable contract). */
  get native(): unknown {
    return this.sandbox;
  }

  /**
   * Maps an SDK error to a core error (`mapE2BError`). Whether a generic failure or a timeout means the sandbox is
   * gone is core's question (ADR 0037): it asks `probe()`.
   */
  private failure(error: unknown, operation: string, path?: string): SbxError {
    return mapE2BError(error, { operation, sandboxId: this.id, path, timeoutMs: this.options.requestTimeoutMs });
  }

  /**
   * Whether the sandbox still exists, from envd's `/health` (E2B's edge answers 502 once the sandbox is gone):
   * `"gone"` when it says the sandbox is not running, `"running"` when it is, `"unknown"` when the check failed (a
   * failed check proves nothing).
   */
  async probe(): Promise<ProbeAnswer> {
    try {
      return (await this.sandbox.isRunning({ requestTimeoutMs: LOST_SANDBOX_PROBE_TIMEOUT_MS })) ? "running" : "gone";
    } catch {
      return "unknown";
    }
  }

  async spawn(request: SpawnRequest): Promise<SpawnedProcess> {
    const raw = processClientOf(this.sandbox.commands);
    const started = raw ? await this.startWithBytes(request, raw.client, raw.envdVersion) : await this.startWithText(request);
    return this.processHandle(started.pid, started.exit);
  }

  /**
   * A terminal (`PTY`, ADR 0054): envd's process API in PTY mode (`e2b-terminal.ts`). Input, resize and the verified
   * kill go by pid as for commands; the exit code is envd's, never assumed.
   */
  async openTerminal(request: TerminalRequest): Promise<DriverTerminal> {
    const raw = terminalClientOf(this.sandbox.pty);
    if (!raw) throw this.failure(new Error("this version of the e2b SDK does not expose its envd process client for terminals"), "open a terminal");
    let started: { pid: number; exit: Promise<number> };
    try {
      started = await startTerminal(raw.client, raw.envdVersion, request, {
        user: this.options.user,
        requestTimeoutMs: this.options.requestTimeoutMs,
      });
    } catch (error) {
      throw this.failure(error, "open a terminal");
    }
    const { pid } = started;
    const handle = this.processHandle(pid, started.exit);
    return {
      ...handle,
      writeStdin: async (data) => {
        try {
          await this.sandbox.pty.sendInput(pid, data, { requestTimeoutMs: this.options.requestTimeoutMs });
        } catch (error) {
          throw this.failure(error, "write to a terminal");
        }
      },
      // A terminal has no end of input of its own: its program reads Ctrl-D (written by the caller) as one.
      closeStdin: () => Promise.resolve(),
      resize: async (size) => {
        try {
          await this.sandbox.pty.resize(pid, { cols: size.cols, rows: size.rows }, { requestTimeoutMs: this.options.requestTimeoutMs });
        } catch (error) {
          throw this.failure(error, "resize a terminal");
        }
      },
    };
  }

  /** File watching (`FILE_WATCH`, ADR 0054): envd's `WatchDir` through the SDK's `files.watchDir` (`e2b-file-watch.ts`). */
  async watchFiles(request: WatchFilesRequest): Promise<DriverFileWatch> {
    return watchE2BDirectory(
      {
        sandbox: this.sandbox,
        user: this.options.user,
        requestTimeoutMs: this.options.requestTimeoutMs,
        streamDeadlineMs: NO_STREAM_DEADLINE_MS,
        confinedType: async (path, signal) => (await posixFileOperations(this).stat(path, { followSymlinks: true, signal })).type,
        failure: (error, operation, path) => this.failure(error, operation, path),
      },
      request,
    );
  }

  /** Starts through the SDK's envd client, reading output bytes exactly as envd sent them. */
  private async startWithBytes(
    request: SpawnRequest,
    client: ProcessStartClient,
    envdVersion: string,
  ): Promise<{ pid: number; exit: Promise<number> }> {
    const controller = new AbortController();
    const started = client.start(
      { process: { cmd: "/bin/bash", args: ["-l", "-c", inWorkingDirectory(request)], envs: { ...request.env } }, stdin: request.stdin },
      { headers: startHeaders(envdVersion, this.options.user), signal: controller.signal },
    );
    const iterator = started[Symbol.asyncIterator]();
    let pid: number;
    const startTimer = this.options.requestTimeoutMs ? setTimeout(() => controller.abort(), this.options.requestTimeoutMs) : undefined;
    try {
      const first = await iterator.next();
      const event = first.value?.event?.event;
      if (first.done || event?.case !== "start") throw new Error("envd did not send the process start event first");
      pid = Number(event.value.pid);
    } catch (error) {
      controller.abort();
      throw this.failure(error, "start a command");
    } finally {
      if (startTimer) clearTimeout(startTimer);
    }
    const exit = (async () => {
      try {
        for (;;) {
          const next = await iterator.next();
          if (next.done) break;
          const event = next.value.event?.event;
          if (event?.case === "data") {
            const output = event.value.output;
            if (output.case === "stdout" && output.value) request.onStdout(output.value);
            else if (output.case === "stderr" && output.value) request.onStderr(output.value);
          } else if (event?.case === "end") {
            return exitCodeOfEnd(event.value);
          }
        }
        throw new Error("the envd process stream ended without an end event");
      } finally {
        controller.abort();
      }
    })();
    return { pid, exit };
  }

  /** Starts through the SDK's public `commands.run`: output arrives as text the SDK decoded (invalid UTF-8 already U+FFFD). */
  private async startWithText(request: SpawnRequest): Promise<{ pid: number; exit: Promise<number> }> {
    let handle: CommandHandle;
    try {
      handle = await this.sandbox.commands.run(inWorkingDirectory(request), {
        background: true,
        envs: { ...request.env },
        user: this.options.user,
        stdin: request.stdin,
        timeoutMs: NO_STREAM_DEADLINE_MS,
        requestTimeoutMs: this.options.requestTimeoutMs,
        onStdout: (text: string) => request.onStdout(this.encoder.encode(text)),
        onStderr: (text: string) => request.onStderr(this.encoder.encode(text)),
      });
    } catch (error) {
      throw this.failure(error, "start a command");
    }
    const exit = handle.wait().then(
      (result) => result.exitCode,
      (error: unknown) => {
        const exitCode = (error as { exitCode?: unknown }).exitCode;
        if ((error as { name?: string }).name === "CommandExitError" && typeof exitCode === "number")
          return exitCode < 0 ? KILLED_EXIT_CODE : exitCode;
        throw error;
      },
    );
    return { pid: handle.pid, exit };
  }

  /** The sbx process handle: stdin and kill through the SDK's public methods, by pid. */
  private processHandle(pid: number, rawExit: Promise<number>): SpawnedProcess {
    let exited = false;
    let killed = false;
    /**
     * The failure the command's exit ended with (a gone sandbox, or a failure core then asks `probe()` about): a kill
     * after it cannot verify anything, so it rejects with the same.
     */
    let exitFailure: SbxError | undefined;
    const exit = rawExit
      .then(
        (exitCode) => ({ exitCode }),
        (error: unknown) => {
          // Our own destroy() ended it: the command died with the sandbox, as asked.
          if (this.destroyed) return { exitCode: KILLED_EXIT_CODE };
          const mapped = this.failure(error, "wait for a command");
          if (killed && mapped.code !== "SBX_SANDBOX_NOT_FOUND") return { exitCode: KILLED_EXIT_CODE };
          exitFailure = mapped;
          throw mapped;
        },
      )
      .finally(() => {
        exited = true;
      });
    let killing: Promise<void> | undefined;
    const kill = () => {
      if (!killing) {
        killed = true;
        killing = (async () => {
          if (exitFailure) throw exitFailure;
          if (exited || this.destroyed) return;
          try {
            await this.sandbox.commands.run(`/bin/bash -c ${shellQuote(KILL_PROCESS_TREE_SCRIPT)} sbx-kill ${pid}`, {
              user: "root",
              requestTimeoutMs: this.options.requestTimeoutMs,
            });
            if (!exited) await this.sandbox.commands.kill(pid, { requestTimeoutMs: this.options.requestTimeoutMs });
          } catch (error) {
            // eslint-disable-next-line @typescript-eslint/only-throw-error -- `exitFailure` is an SbxError (TypeScript narrows it to `never` here, after the await)
            if (exitFailure) throw exitFailure;
            if (exited || this.destroyed) return;
            // A sandbox that vanished took the command with it, but that is not a verified kill: say it is gone.
            throw this.failure(error, "kill a command");
          }
        })();
      }
      return killing;
    };
    // One `SendInput` call at a time, in order: the agent's frames are written without waiting for each other.
    const sendStdin = orderedStdinWriter({
      send: (data) => this.sandbox.commands.sendStdin(pid, data, { requestTimeoutMs: this.options.requestTimeoutMs }),
    });
    return {
      pid: String(pid),
      exit,
      writeStdin: async (data) => {
        try {
          await sendStdin(data);
        } catch (error) {
          throw this.failure(error, "write to stdin");
        }
      },
      closeStdin: async () => {
        try {
          await this.sandbox.commands.closeStdin(pid, { requestTimeoutMs: this.options.requestTimeoutMs });
        } catch (error) {
          if (exited) return;
          throw this.failure(error, "close stdin");
        }
      },
      kill,
    };
  }

  async runCode(request: CodeRequest): Promise<DriverExecution> {
    let context = request.contextId ? this.contexts.get(request.contextId) : undefined;
    if (request.contextId && !context) context = { id: request.contextId, language: request.language, cwd: request.cwd };
    const oneShot = context === undefined;
    if (oneShot) context = await this.createContext(request.language, request.cwd, request.signal);
    const target = context!;
    const run = this.sandbox.runCode(request.code, {
      context: target,
      envs: { ...request.env },
      timeoutMs: NO_STREAM_DEADLINE_MS,
      requestTimeoutMs: this.options.requestTimeoutMs,
      onStdout: (message) => request.onStdout(message.line),
      onStderr: (message) => request.onStderr(message.line),
    });
    let onAbort: (() => void) | undefined;
    const aborted = new Promise<"aborted">((resolve) => {
      onAbort = () => resolve("aborted");
      if (request.signal.aborted) onAbort();
      else request.signal.addEventListener("abort", onAbort, { once: true });
    });
    try {
      const outcome = await Promise.race([run, aborted]);
      if (outcome === "aborted") {
        run.catch(() => {});
        // E2B has no interrupt call: a one-shot context is removed (its kernel ends); a caller's context is
        // restarted, which ends the running cell and clears the context's state.
        if (oneShot) void this.removeContext(target.id);
        else await this.sandbox.restartCodeContext(target.id).catch(() => {});
        return { error: null, results: null };
      }
      return { error: mapE2BExecutionError(outcome.error), results: outcome.results.map(mapE2BResult) };
    } catch (error) {
      throw this.failure(error, "run code");
    } finally {
      if (onAbort) request.signal.removeEventListener("abort", onAbort);
      if (oneShot && !request.signal.aborted) void this.removeContext(target.id);
    }
  }

  private async createContext(language: string, cwd: string, signal?: AbortSignal) {
    try {
      const created = await this.sandbox.createCodeContext({ language, cwd, requestTimeoutMs: this.options.requestTimeoutMs });
      if (signal?.aborted) void this.removeContext(created.id);
      return { id: created.id, language: created.language ?? language, cwd: created.cwd ?? cwd };
    } catch (error) {
      throw this.failure(error, "create a code context");
    }
  }

  private async removeContext(id: string): Promise<void> {
    await this.sandbox.removeCodeContext(id).catch(() => {});
  }

  async createCodeContext(request: { language: string; cwd: string; signal?: AbortSignal }): Promise<{ id: string; language: string }> {
    const context = await this.createContext(request.language, request.cwd, request.signal);
    this.contexts.set(context.id, context);
    return { id: context.id, language: context.language };
  }

  // Every file operation (read, write, stat, list, remove, mkdir, rename) is core's default through spawn: its
  // race-free helper as the sandbox's user (ADR 0020, ADR 0031), where envd's filesystem API would run as root,
  // following symlinks, behind a check a flip can race.

  /** Moves the sandbox's end through E2B's `setTimeout` and answers the end E2B applied (`SET_LIFETIME`, e2b-lifetime.ts). */
  setLifetime(request: { expiresAt: string; signal?: AbortSignal }): Promise<{ expiresAt: string }> {
    return setE2BLifetime(this.sandbox, request, this.options.requestTimeoutMs);
  }

  async destroy(): Promise<void> {
    if (!this.destroyed) {
      this.destroyed = (async () => {
        try {
          await this.sandbox.kill({ requestTimeoutMs: this.options.requestTimeoutMs });
        } catch (error) {
          const mapped = mapE2BError(error, { operation: "kill the sandbox", sandboxId: this.id });
          if (mapped.code !== "SBX_SANDBOX_NOT_FOUND") throw mapped;
        }
      })();
    }
    return this.destroyed;
  }
}
