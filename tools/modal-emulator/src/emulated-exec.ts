/**
 * One `TaskExecStart`: a `docker exec` inside the sandbox's container, with Modal's semantics around it: output kept
 * for offset reads, stdin writes de-duplicated by byte offset (the client retries them), the exec timeout enforced
 * here (Modal's client does not cut a running wait short), and a blocking wait.
 *
 * The process is started through a tiny `/bin/sh` wrapper that records its pid in a file and then `exec`s the
 * command, so the pid is the command's own. Docker makes every exec a session leader, so killing "the session of
 * that pid" kills every process the command started, double-forked ones included.
 */
import type Docker from "dockerode";
import { runExec, sessionHasProcesses, startExec, type RunningExec } from "@sbx/emulator-kit";
import { OutputBuffer } from "./output-buffer.js";
import { terminalCommand, type ExecTerminal } from "./exec-terminal.js";

/** Folder (inside the container) holding one pid file per exec. */
export const PID_FOLDER = "/__modal/run";

/** How an exec ended: an exit code, or the signal that killed it (Modal's `oneof exit_status`). */
export type ExitStatus = { code: number } | { signal: number };

/** What `TaskExecStart` asked for. */
export interface ExecRequest {
  readonly execId: string;
  readonly argv: readonly string[];
  readonly environment: Record<string, string>;
  readonly workdir: string | undefined;
  readonly timeoutSeconds: number | undefined;
  readonly stdoutPiped: boolean;
  readonly stderrPiped: boolean;
  /** A pseudo-terminal for the process (`pty_info`), or undefined for pipes. */
  readonly terminal?: ExecTerminal | undefined;
}

/** Signals every process of the session led by the pid in a pid file (run as root in the container). */
const KILL_SESSION_SCRIPT = `
session="$(cat "$1" 2>/dev/null)"
[ -n "$session" ] || exit 0
for pass in 1 2; do
  for directory in /proc/[0-9]*; do
    read -r line < "$directory/stat" 2>/dev/null || continue
    rest="\${line##*) }"
    set -- $rest
    if [ "$4" = "$session" ] || [ "$3" = "$session" ]; then kill -KILL "\${directory#/proc/}" 2>/dev/null; fi
  done
done
exit 0
`;

/** A running or finished exec. */
export class EmulatedExec {
  /** Set by the sandbox before it removes its container: the process is then reported killed (exit 137). */
  sandboxEnded = false;
  readonly stdout = new OutputBuffer();
  readonly stderr = new OutputBuffer();
  /** Bytes of stdin accepted so far (offsets below this are duplicates of retried writes). */
  stdinBytesWritten = 0;
  stdinClosed = false;
  /** Set once the process ended and its output was drained. */
  status: ExitStatus | undefined;
  /** True when the emulator killed it because `timeout_secs` ran out. */
  timedOut = false;
  private running: RunningExec | undefined;
  private starting: Promise<void> | undefined;
  private timer: NodeJS.Timeout | undefined;
  private readonly finishedWaiters = new Set<() => void>();
  private readonly pidFile: string;

  constructor(
    private readonly container: Docker.Container,
    readonly request: ExecRequest,
    private readonly onActivity: () => void,
  ) {
    this.pidFile = `${PID_FOLDER}/${request.execId.replace(/[^A-Za-z0-9-]/g, "_")}`;
  }

  /**
   * Starts the process once; resolves once Docker accepted the exec. A retried `TaskExecStart` (the client's deadline
   * ran out on a loaded engine) waits for the same start, so stdin it sends next is never written before there is a
   * process to take it.
   */
  start(): Promise<void> {
    this.starting ??= this.startProcess();
    return this.starting;
  }

  private async startProcess(): Promise<void> {
    const { request } = this;
    this.running = await startExec(
      this.container,
      {
        command: request.terminal
          ? terminalCommand(this.pidFile, request.terminal, request.argv)
          : ["/bin/sh", "-c", 'echo $$ > "$0"; exec "$@"', this.pidFile, ...request.argv],
        workingDirectory: request.workdir,
        environment: request.terminal ? { ...request.environment, TERM: request.terminal.term } : request.environment,
        attachStdin: true,
        tty: request.terminal !== undefined,
      },
      {
        onStdout: (chunk) => {
          if (request.stdoutPiped) this.stdout.append(chunk);
          this.onActivity();
        },
        onStderr: (chunk) => {
          if (request.stderrPiped) this.stderr.append(chunk);
          this.onActivity();
        },
      },
    );
    if (request.timeoutSeconds && request.timeoutSeconds > 0) {
      this.timer = setTimeout(() => {
        this.timedOut = true;
        void this.kill();
      }, request.timeoutSeconds * 1000);
      this.timer.unref();
    }
    const running = this.running;
    void running.exitCode.then(async (code) => {
      await this.drainOutput(running);
      running.detach();
      if (this.timer) clearTimeout(this.timer);
      this.stdout.end();
      this.stderr.end();
      // A process whose sandbox ended was killed with it, whatever the engine reports for the interrupted exec.
      this.status = this.timedOut ? { signal: 9 } : this.sandboxEnded ? { code: 137 } : { code };
      this.onActivity();
      for (const waiter of this.finishedWaiters) waiter();
      this.finishedWaiters.clear();
    });
  }

  /**
   * Waits for the output still owed after the process exited. Docker usually ends the stream right away. If not,
   * either a background process of the command's session holds stdout (then stop once the pipe is quiet, as Modal
   * does not wait for it either) or the rest is only in flight: a loaded engine can pause for longer than any quiet
   * window, so then wait for the stream's end (bounded), never cutting output a finished command wrote.
   */
  private async drainOutput(running: RunningExec): Promise<void> {
    const endedPromptly = await Promise.race([
      running.outputEnded.then(() => true),
      new Promise<boolean>((resolve) => setTimeout(() => resolve(false), 50)),
    ]);
    if (endedPromptly) return;
    if (await this.sessionStillRuns().catch(() => true)) await running.waitForOutputToSettle(100, 2000);
    else await running.waitForOutputToSettle(10_000, 30_000);
  }

  /** True when a process of the command's session (Docker makes each exec a session leader) still runs. */
  private async sessionStillRuns(): Promise<boolean> {
    const recorded = await runExec(this.container, { command: ["/bin/cat", this.pidFile], user: "root" });
    const sessionId = Number(recorded.stdout.toString("utf8").trim());
    return !Number.isInteger(sessionId) || sessionId <= 0 || (await sessionHasProcesses(this.container, sessionId));
  }

  /** Accepts stdin bytes at `offset`, ignoring the part already written (retries), and closes stdin on `eof`. */
  writeStdin(offset: number, data: Uint8Array, eof: boolean): void {
    if (offset > this.stdinBytesWritten) throw new Error(`stdin offset ${offset} is past the ${this.stdinBytesWritten} bytes written so far`);
    if (!this.running) throw new Error("stdin arrived before the exec started");
    const fresh = data.subarray(Math.min(data.length, this.stdinBytesWritten - offset));
    if (fresh.length > 0 && !this.stdinClosed) {
      this.running?.connection.write(Buffer.from(fresh));
      this.stdinBytesWritten += fresh.length;
    }
    if (eof && !this.stdinClosed) {
      this.stdinClosed = true;
      this.running?.closeStdin();
    }
    this.onActivity();
  }

  /** Resolves with the exit status once the process ended, or `undefined` when `signal` aborts first. */
  async wait(signal: AbortSignal): Promise<ExitStatus | undefined> {
    if (this.status) return this.status;
    await new Promise<void>((resolve) => {
      const done = () => {
        signal.removeEventListener("abort", done);
        this.finishedWaiters.delete(done);
        resolve();
      };
      this.finishedWaiters.add(done);
      signal.addEventListener("abort", done, { once: true });
    });
    return this.status;
  }

  /** Kills the process and every process of its session. */
  async kill(): Promise<void> {
    await runExec(this.container, { command: ["/bin/sh", "-c", KILL_SESSION_SCRIPT, "modal-emulator-kill", this.pidFile], user: "root" }).catch(
      () => undefined,
    );
  }
}
