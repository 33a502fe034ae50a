import { randomBytes } from "node:crypto";
import { ProviderError, SandboxNotFoundError, type SandboxSnapshot, type SbxError } from "@sbx/core";
import {
  type DriverAudit,
  type DriverCodeAgent,
  type ProbeAnswer,
  type SandboxDriverV1,
  type SpawnedProcess,
  type SpawnRequest,
  type DriverTerminal,
  type TerminalRequest,
  commandOutOfMemoryReport,
  KILL_PROCESS_TREE_SCRIPT,
  OUT_OF_MEMORY_PROBE_SCRIPT,
  parseOutOfMemoryKills,
} from "@sbx/core/adapter";
import type { ContainerProcess, Sandbox } from "modal";
import { drainCommandOutput, pumpCommandOutput, type CommandOutput, type OutputEnd } from "./command-output.js";
import { COMMAND_MARKER_VARIABLE, COMMAND_STILL_RUNS_SCRIPT, KILL_COMMAND_SCRIPT } from "./kill-process-tree.js";
import { commandInvocation } from "./command-invocation.js";
import { MODAL_TERMINAL_SIZE, TERMINAL_WRAPPER, terminalSizeRefusal } from "./modal-terminal.js";
import { mapModalError } from "./map-modal-error.js";
import { takeModalSnapshot, type ModalSnapshotStore } from "./modal-snapshots.js";

/** The sandbox's workspace: sent as the sandbox `workdir` at create, so Modal starts there and creates it. */
export const MODAL_WORKSPACE = "/workspace";

/** Exit code reported for a command whose sandbox ended (or that was killed) before it reported its own. */
export const KILLED_EXIT_CODE = 128 + 9;

/** How long a killed command's output may still arrive before its result is given with what came (its exit code says it was killed). */
export const KILLED_OUTPUT_GRACE_MS = 1_000;

/**
 * The most bytes sent in one stdin write (one `TaskExecStdinWrite` message): the chunk size modal@0.11.1 itself uses
 * when it streams stdin (`STREAMING_STDIN_CHUNK_SIZE`, 256 KiB), so no write depends on a server's message limit.
 */
export const STDIN_WRITE_BYTES = 256 * 1024;

/** What `ModalDriver` needs besides the SDK sandbox. */
export interface ModalDriverOptions {
  /** The audit record made at create or connect. */
  readonly audit: DriverAudit;
  /** Where this sandbox's snapshots are kept (ADR 0062). Without it `snapshot()` is refused (a driver made by hand). */
  readonly snapshots?: ModalSnapshotStore;
}

/**
 * One live Modal sandbox as an sbx driver: commands through `sandbox.exec` (binary output streamed as it arrives,
 * stdin through the exec's stdin stream), files through core's race-free file helper over `exec` (ADR 0031), kill
 * through a second exec that kills the command's whole tree. Code, rich results, file watching and port connections
 * come from the sbx sandbox agent, which core starts through `spawn` (one exec kept open, ADR 0061). Every SDK error
 * is mapped by `mapModalError`.
 */
export class ModalDriver implements SandboxDriverV1 {
  readonly id: string;
  readonly workspace = MODAL_WORKSPACE;
  readonly audit: DriverAudit;
  /**
   * The sbx sandbox agent, which core attaches (ADR 0037, ADR 0061): started by the first code call, file watch or port
   * connection as one `exec` kept open (the image's python3; its frames over the exec's stdin and stdout), and gives
   * `runCode`, `createCodeContext`, `watchFiles` and `openPortConnection`. Commands stay one `exec` each
   * (`"driver"`), and terminals stay Modal's own PTY (`openTerminal` below wins over the agent's).
   */
  readonly codeAgent: DriverCodeAgent = { commands: "driver" };
  private destroyed: Promise<void> | undefined;
  private readonly ended = new AbortController();
  private readonly snapshots: ModalSnapshotStore | undefined;
  /** The cgroup's OOM kill counter as last read (null: the sandbox exposes none); read before the first command. */
  private outOfMemoryKills: Promise<number | null> | undefined;

  constructor(
    private readonly sandbox: Sandbox,
    options: ModalDriverOptions,
  ) {
    this.id = sandbox.sandboxId;
    this.audit = options.audit;
    this.snapshots = options.snapshots;
  }

  /** The SDK's sandbox object, for the adapter's escape hatch (outside the portable contract). */
  get native(): unknown {
    return this.sandbox;
  }

  /**
   * Maps an SDK error (`mapModalError`). Whether a generic failure means the sandbox is gone is core's question
   * (ADR 0037): it asks `probe()`. (Modal's filesystem API reports a call on a finished sandbox as an "unexpected
   * error"; the probe's `poll` tells the two apart.)
   */
  private failure(error: unknown, operation: string, path?: string): SbxError {
    return mapModalError(error, { operation, sandboxId: this.id, path });
  }

  /**
   * Whether the sandbox still exists, from one `poll`: `"running"` while it has no exit code, `"gone"` once it has
   * finished (terminated, timed out, idle) or Modal no longer knows it, `"unknown"` when the poll failed otherwise.
   */
  async probe(): Promise<ProbeAnswer> {
    try {
      return (await this.sandbox.poll()) === null ? "running" : "gone";
    } catch (error) {
      return mapModalError(error, { operation: "check the sandbox", sandboxId: this.id }).code === "SBX_SANDBOX_NOT_FOUND" ? "gone" : "unknown";
    }
  }

  /** Settles like `work`, or with `fallback` once the sandbox is destroyed, so nothing waits on a sandbox that is gone. */
  private async orWhenDestroyed<T>(work: Promise<T>, fallback: T): Promise<T> {
    if (this.ended.signal.aborted) return fallback;
    let onAbort: (() => void) | undefined;
    const destroyed = new Promise<T>((resolve) => {
      onAbort = () => resolve(fallback);
      this.ended.signal.addEventListener("abort", onAbort, { once: true });
    });
    try {
      return await Promise.race([work, destroyed]);
    } finally {
      this.ended.signal.removeEventListener("abort", onAbort!);
    }
  }

  /**
   * Delivers the rest of a finished command's output (ADR 0028): to its end, however slowly it arrives; cut only
   * where a background child of the command holds the pipe. A stream that fails, or whose end never arrives, fails
   * the command (a retryable `ProviderError`): never a result closed short. After a kill or the sandbox's end the
   * output is whatever arrived (the exit code already says the command did not finish).
   */
  private async finishOutput(output: CommandOutput, commandId: string, wasKilled: () => boolean): Promise<void> {
    const stopped = () => wasKilled() || this.ended.signal.aborted;
    // After sbx's own kill the output is whatever arrives within KILLED_OUTPUT_GRACE_MS; the exit code says the rest.
    const signal = wasKilled() ? AbortSignal.any([this.ended.signal, AbortSignal.timeout(KILLED_OUTPUT_GRACE_MS)]) : this.ended.signal;
    let end: OutputEnd;
    try {
      end = await drainCommandOutput(output, { commandStillRuns: () => this.commandStillRuns(commandId), signal });
    } catch (error) {
      if (stopped()) return;
      throw error;
    } finally {
      output.cancel();
    }
    if (end.kind === "complete" || end.kind === "held-by-background-child" || end.kind === "abandoned" || stopped()) return;
    if (end.kind === "failed") {
      const mapped = this.failure(end.error, "read a command's output");
      if (mapped.code !== "SBX_PROVIDER") throw mapped;
      throw new ProviderError({
        backend: "modal",
        retryable: true,
        cause: end.error,
        message: `The output of a command in the Modal sandbox ${this.id} failed after the command exited, before its end arrived (${mapped.message}); the command's output is incomplete. Run it again.`,
      });
    }
    throw new ProviderError({
      backend: "modal",
      retryable: true,
      message: `The output of a command in the Modal sandbox ${this.id} stopped arriving after the command exited: nothing came for ${Math.round(end.quietMs / 1000)} s and no process of the command was left to hold it; the command's output is incomplete. Run it again.`,
    });
  }

  /** Whether a process of the command (its marker in the environment) still runs in the sandbox. */
  private async commandStillRuns(commandId: string): Promise<boolean> {
    try {
      const check = await this.sandbox.exec(["/bin/sh", "-c", COMMAND_STILL_RUNS_SCRIPT, "sbx-still-runs", commandId], {
        stdout: "ignore",
        stderr: "ignore",
      });
      return (await this.orWhenDestroyed(check.wait(), 1)) === 0;
    } catch (error) {
      throw this.failure(error, "check a command's background processes");
    }
  }

  /** Reads the sandbox cgroup's OOM kill counter (core's probe script); null when unreadable. */
  private async readOutOfMemoryKills(): Promise<number | null> {
    try {
      const probe = await this.sandbox.exec(["/bin/sh", "-c", OUT_OF_MEMORY_PROBE_SCRIPT]);
      const [output] = await Promise.all([probe.stdout.readText(), probe.wait()]);
      return parseOutOfMemoryKills(output);
    } catch {
      return null;
    }
  }

  /**
   * Whether the kernel's OOM killer struck since the last read (ADR 0029), as core's honest report (ADR 0030): the
   * counter names no victim, so a grown counter is unknown (`null`), an unchanged one `false`; null when unreadable.
   */
  private async outOfMemoryKilledSinceLastRead(): Promise<false | null> {
    const before = await (this.outOfMemoryKills ?? Promise.resolve(null));
    const now = this.orWhenDestroyed(this.readOutOfMemoryKills(), null);
    this.outOfMemoryKills = now;
    const after = await now;
    if (after === null) return null;
    return commandOutOfMemoryReport(after > (before ?? 0));
  }

  async spawn(request: SpawnRequest): Promise<SpawnedProcess> {
    const commandId = randomBytes(12).toString("hex");
    const invocation = commandInvocation({ command: request.command, commandId, cwd: request.cwd, stdin: request.stdin === true });
    return this.startTracked({
      argv: invocation.argv,
      stdinHeader: invocation.stdinHeader,
      env: request.env,
      commandId,
      deliver: request,
      pty: false,
    });
  }

  /**
   * A terminal (`PTY`, ADR 0054): `exec` with `pty: true`, whose size modal@0.11.1 fixes at 80×24 with no resize; any
   * other size, and every resize, is refused with `CapabilityNotSupportedError` rather than given silently wrong.
   */
  async openTerminal(request: TerminalRequest): Promise<DriverTerminal> {
    if (request.cols !== MODAL_TERMINAL_SIZE.cols || request.rows !== MODAL_TERMINAL_SIZE.rows) {
      throw terminalSizeRefusal(`a terminal of ${request.cols}×${request.rows} was asked for`);
    }
    const commandId = randomBytes(12).toString("hex");
    const argv = ["/bin/sh", "-c", TERMINAL_WRAPPER, "sbx", request.command, commandId, request.cwd];
    const started = await this.startTracked({
      argv,
      env: request.env,
      commandId,
      deliver: { onStdout: request.onData, onStderr: request.onData },
      pty: true,
    });
    return {
      ...started,
      // A terminal has no end of input of its own: its program reads Ctrl-D (written by the caller) as one.
      closeStdin: () => Promise.resolve(),
      resize: (size) => Promise.reject(terminalSizeRefusal(`resize to ${size.cols}×${size.rows} was asked for`)),
    };
  }

  /** Starts one exec whose process tree `KILL_COMMAND_SCRIPT` can kill by `commandId` (its wrapper records the pid). */
  private async startTracked(options: {
    argv: string[];
    /** Bytes written on stdin before anything else: a long command's text (`commandInvocation`). */
    stdinHeader?: Uint8Array | undefined;
    env: Readonly<Record<string, string>>;
    commandId: string;
    deliver: { onStdout: (chunk: Uint8Array) => void; onStderr: (chunk: Uint8Array) => void };
    pty: boolean;
  }): Promise<SpawnedProcess> {
    const { commandId } = options;
    const request = options.deliver;
    // The OOM counter's baseline, once, before the first command can change it.
    this.outOfMemoryKills ??= this.orWhenDestroyed(this.readOutOfMemoryKills(), null);
    await this.outOfMemoryKills;
    let process: ContainerProcess<Uint8Array>;
    try {
      process = await this.sandbox.exec(options.argv, {
        mode: "binary",
        env: { ...options.env, [COMMAND_MARKER_VARIABLE]: commandId },
        ...(options.pty ? { pty: true } : {}),
      });
    } catch (error) {
      throw this.failure(error, options.pty ? "open a terminal" : "start a command");
    }
    const stdin = process.stdin.getWriter();
    let stdinClosed = false;
    const closeStdinOnce = async () => {
      if (stdinClosed) return;
      stdinClosed = true;
      await stdin.close();
    };
    const writePieces = async (data: Uint8Array) => {
      // One `TaskExecStdinWrite` per piece: the agent's frames and file bodies can be larger than a message should be.
      for (let start = 0; start < data.byteLength; start += STDIN_WRITE_BYTES) await stdin.write(data.subarray(start, start + STDIN_WRITE_BYTES));
    };
    if (options.stdinHeader) {
      try {
        await writePieces(options.stdinHeader);
      } catch (error) {
        // The bootstrap waits for the rest of its header: an EOF makes it refuse the command (exit 125), if it still arrives.
        await closeStdinOnce().catch(() => {});
        throw this.failure(error, "start a command");
      }
    }
    // A command without stdin reads /dev/null (the wrapper's `no-stdin`), so no EOF needs to be sent for it.
    const output = pumpCommandOutput(process, request);
    let exited = false;
    let killed = false;
    const exit = (async () => {
      let exitCode: number;
      try {
        exitCode = await this.orWhenDestroyed(process.wait(), KILLED_EXIT_CODE);
      } catch (error) {
        if (killed || this.ended.signal.aborted) exitCode = KILLED_EXIT_CODE;
        else throw mapModalError(error, { operation: "wait for a command", sandboxId: this.id });
      }
      // An exit by SIGKILL that sbx did not cause may be the sandbox ending under the command (terminated
      // elsewhere, its lifetime or idle timeout): Modal then reports the sandbox finished, a fact, not a result.
      if (exitCode === KILLED_EXIT_CODE && !killed && !this.ended.signal.aborted && (await this.probe()) === "gone") {
        throw new SandboxNotFoundError({
          backend: "modal",
          sandboxId: this.id,
          message: `The Modal sandbox ${this.id} ended while a command ran in it (terminated, timed out or idle). Create a new sandbox.`,
        });
      }
      const outOfMemoryKilled =
        exitCode === KILLED_EXIT_CODE && !killed && !this.ended.signal.aborted ? await this.outOfMemoryKilledSinceLastRead() : undefined;
      await this.finishOutput(output, commandId, () => killed);
      return outOfMemoryKilled === undefined ? { exitCode } : { exitCode, outOfMemoryKilled };
    })().finally(() => {
      exited = true;
    });
    let killing: Promise<void> | undefined;
    const kill = () => {
      killing ??= (async () => {
        killed = true;
        if (exited || this.ended.signal.aborted) return;
        try {
          const killer = await this.sandbox.exec(["/bin/sh", "-c", KILL_COMMAND_SCRIPT, "sbx-kill", commandId, KILL_PROCESS_TREE_SCRIPT], {
            stdout: "ignore",
            stderr: "ignore",
          });
          await this.orWhenDestroyed(killer.wait(), 0);
        } catch (error) {
          if (exited || this.ended.signal.aborted) return;
          const mapped = mapModalError(error, { operation: "kill a command", sandboxId: this.id });
          if (mapped.code === "SBX_SANDBOX_NOT_FOUND") return;
          throw mapped;
        }
      })();
      return killing;
    };
    return {
      pid: commandId,
      exit,
      writeStdin: async (data) => {
        try {
          await writePieces(data);
        } catch (error) {
          throw this.failure(error, "write to stdin");
        }
      },
      closeStdin: async () => {
        try {
          await closeStdinOnce();
        } catch (error) {
          if (exited) return;
          throw this.failure(error, "close stdin");
        }
      },
      kill,
    };
  }

  // Every file operation (readFile, writeFile, stat, list, remove, mkdir, rename): core's POSIX defaults through
  // spawn (ADR 0020, ADR 0031, ADR 0037), which follow the file policy. Not Modal's filesystem API: its ReadFile
  // returns the whole file at once (a 2 GiB file would be held in host memory before core's read limit applies),
  // follows every symbolic link (a check before it is a check-then-use gap) and blocks forever on a FIFO.

  /** A filesystem snapshot (`SNAPSHOTS`, ADR 0062): Modal's `snapshotFilesystem`, named `sbx-snapshot:<image id>` so it is listed. */
  async snapshot(request: { signal?: AbortSignal }): Promise<SandboxSnapshot> {
    if (!this.snapshots)
      throw new ProviderError({ backend: "modal", message: "This Modal driver was made without a snapshot store (ModalDriverOptions.snapshots)." });
    return takeModalSnapshot(this.snapshots, this.sandbox, request.signal);
  }

  async destroy(): Promise<void> {
    this.destroyed ??= (async () => {
      try {
        await this.sandbox.terminate();
      } catch (error) {
        const mapped = mapModalError(error, { operation: "terminate the sandbox", sandboxId: this.id });
        if (mapped.code !== "SBX_SANDBOX_NOT_FOUND") throw mapped;
      } finally {
        this.ended.abort();
        this.sandbox.detach();
      }
    })();
    return this.destroyed;
  }
}
