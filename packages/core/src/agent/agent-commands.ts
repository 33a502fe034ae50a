import { ProviderError } from "../errors/index.js";
import { commandExitOutcome } from "../posix/command-exit-outcome.js";
import { settleWithinGrace } from "../limits/deadline.js";
import type { DriverTerminal, SpawnedProcess, SpawnRequest } from "../v1/provider.js";
import type { AgentCommandEnforcement } from "./agent-client-options.js";
import type { AgentFrame } from "./agent-frames.js";
import { agentRequestError } from "./agent-request-error.js";
import type { AgentSession } from "./agent-session.js";

/** After a kill (verified by the backend, or asked of the agent), how long the agent may take to report the command's exit. */
const EXIT_AFTER_KILL_MS = 5_000;

/** A command's exit as `SpawnedProcess.exit` reports it. */
type ExitValue = Awaited<SpawnedProcess["exit"]>;

/** Errors of commands whose `spawn` reached the agent's stream before the agent was lost: the command may have run. */
const lostAfterSend = new WeakSet<Error>();

/**
 * Whether `error` (a rejection of `spawnThroughAgent`) came after the command was sent to the agent: the agent may
 * have started it before it was lost, so running it again on another path could run it twice. The caller reports
 * the error instead (retryable: the command's processes were killed, or the agent that ran them is gone).
 */
export function agentCommandMayHaveRun(error: unknown): boolean {
  return error instanceof Error && lostAfterSend.has(error);
}

/**
 * Starts a shell command through the agent of `session` (its own session in the sandbox, raw output streamed, stdin)
 * and resolves once the agent said it started; rejects when the agent refused or died first (the caller then uses the
 * driver's own spawn). With `enforcement`, the command carries an audit tag: `kill()` is the backend's verified kill of
 * that tag, a SIGKILL exit goes through core's exit rule (`commandExitOutcome`: out-of-memory report, lost sandbox), and
 * if the agent dies the command's processes are killed through the backend before its `exit` rejects. Without it,
 * `kill()` asks the agent (resolving once it saw the command exit; if it does not within 5 s, the whole agent is
 * killed through the driver).
 */
export async function spawnThroughAgent(
  session: AgentSession,
  request: SpawnRequest,
  options: {
    readonly backend: string;
    readonly enforcement: AgentCommandEnforcement | undefined;
    /** Run the command on a pseudo-terminal of this size (ADR 0049): one output stream, input, `resize`. */
    readonly terminal?: { readonly cols: number; readonly rows: number };
  },
): Promise<SpawnedProcess & Pick<DriverTerminal, "resize">> {
  const command = new AgentCommand(session, options.backend, options.enforcement);
  await command.start(request, options.terminal);
  return command.process();
}

/** One command through the agent: its exit, and its kill escalation. */
class AgentCommand {
  /** Settles once: the command's exit, or why it has none. */
  readonly exit: Promise<ExitValue>;
  private id = 0;
  private readonly tag: string | undefined;
  private settled = false;
  private spawned = false;
  /** Set once the `spawn` was sent: the heartbeat counts the command from then (ADR 0051), not from `spawned`. */
  private counted = false;
  /** Set once sbx asked for the kill: a SIGKILL exit is then ours, not the OOM killer's nor a lost sandbox's. */
  private killRequested = false;
  /** Set once the backend verified the kill: the agent's death after it cannot have left anything running. */
  private killVerified = false;
  private killing: Promise<void> | undefined;
  private resolveExit!: (value: ExitValue) => void;
  private rejectExit!: (error: Error) => void;

  constructor(
    private readonly session: AgentSession,
    private readonly backend: string,
    private readonly enforcement: AgentCommandEnforcement | undefined,
  ) {
    this.tag = enforcement?.newTag();
    this.exit = new Promise<ExitValue>((resolve, reject) => {
      this.resolveExit = resolve;
      this.rejectExit = reject;
    });
    this.exit.catch(() => {});
  }

  /** Sends `spawn`; resolves when the agent says the command started, rejects when it refused or died first. */
  start(request: SpawnRequest, terminal?: { readonly cols: number; readonly rows: number }): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const onFrame = ({ header, body }: AgentFrame) => {
        try {
          if (header.type === "spawned") {
            this.spawned = true;
            if (this.tag) this.enforcement?.commandProcesses?.started(this.tag, Number(header.pid));
            resolve();
          } else if (header.type === "stdout") request.onStdout(body);
          else if (header.type === "stderr") request.onStderr(body);
          else if (header.type === "exit") {
            this.session.settle(this.id);
            this.onExit(Number(header.exit_code));
          } else if (header.type === "error") {
            this.session.settle(this.id);
            const error = agentRequestError({ header, body }, null, this.backend);
            this.finish({ error });
            reject(error);
          }
        } catch {
          // A listener defect must not throw into the agent's stream.
        }
      };
      const fail = (error: Error) => {
        if (this.spawned && this.killVerified) return this.finish({ value: { exitCode: 137, outOfMemoryKilled: false } });
        // The agent died: make sure nothing of the command runs, then say why (before it started, the caller's
        // rejection lets it use the plain path).
        void this.lostCause(error).then((cause) => {
          lostAfterSend.add(cause);
          this.finish({ error: cause });
          reject(cause);
        });
      };
      const environment = { ...this.enforcement?.environment, ...request.env };
      const header = {
        type: "spawn",
        command: request.command,
        cwd: request.cwd,
        env: environment,
        stdin: request.stdin,
        // A backend that kills by process id sends no tag (the command sets no loginuid) but makes the command's shell a
        // child subreaper, so its orphans stay in the tree its kill walks (ADR 0051).
        ...(this.tag && !this.enforcement?.commandProcesses ? { tag: this.tag } : {}),
        ...(this.enforcement?.commandProcesses ? { subreaper: true } : {}),
        ...(terminal ? { terminal: { cols: terminal.cols, rows: terminal.rows } } : {}),
      };
      this.id = this.session.request(null, header, { onFrame, fail });
      // Counted from the send, not from `spawned`: a command that stops the agent before its `spawned` frame leaves
      // (`kill -STOP $PPID` at once) would otherwise never be watched, and its caller would wait for its own timeout.
      this.counted = true;
      this.session.heartbeat.commandStarted();
    });
  }

  /** The command as the driver's `SpawnedProcess`. */
  process(): SpawnedProcess & Pick<DriverTerminal, "resize"> {
    const target = this.id;
    return {
      resize: async (size) => this.session.send({ type: "resize", target, cols: size.cols, rows: size.rows }),
      pid: `agent-${target}`,
      exit: this.exit,
      writeStdin: async (data) => this.session.send({ type: "stdin", target }, data),
      closeStdin: async () => this.session.send({ type: "stdin_close", target }),
      kill: () => (this.killing ??= this.kill()),
    };
  }

  /** Settles the exit once (a resolved exit or an error); the heartbeat no longer counts the command. */
  private finish(outcome: { readonly value: ExitValue } | { readonly error: Error }): void {
    if (this.settled) return;
    this.settled = true;
    if (this.counted) this.session.heartbeat.commandEnded();
    if (this.tag) this.enforcement?.commandProcesses?.ended(this.tag);
    if ("value" in outcome) this.resolveExit(outcome.value);
    else this.rejectExit(outcome.error);
  }

  /** The agent reported the exit: with enforcement, core's exit rule decides what a SIGKILL means. */
  private onExit(exitCode: number): void {
    const enforcement = this.enforcement;
    if (!enforcement) return this.finish({ value: { exitCode } });
    commandExitOutcome({
      exitCode,
      killRequested: () => this.killRequested,
      outOfMemoryCounterGrew: () => enforcement.outOfMemoryKilled(),
      lostError: () => enforcement.lostError(),
    }).then(
      (value) => this.finish({ value }),
      (error: unknown) => this.finish({ error: error instanceof Error ? error : new Error(String(error)) }),
    );
  }

  /** The agent is gone while the command ran: end the command's processes through the backend, then say why it failed. Never rejects. */
  private async lostCause(error: Error): Promise<Error> {
    if (this.killVerified) return error;
    if (!this.tag || !this.enforcement) {
      return new ProviderError({
        backend: this.backend,
        retryable: true,
        cause: error,
        message: `The sbx sandbox agent running the command was lost: ${error.message}`,
      });
    }
    try {
      await this.enforcement.killTagged(this.tag);
    } catch (killError) {
      return killError instanceof Error ? killError : error;
    }
    const lost = await this.enforcement.lostError(error).catch(() => undefined);
    if (lost) return lost;
    return new ProviderError({
      backend: this.backend,
      retryable: true,
      cause: error,
      message: `The sbx sandbox agent running the command was lost (${error.message}); the command's processes were killed (verified). Run it again: the next command uses the plain path.`,
    });
  }

  /**
   * With enforcement: the backend's verified kill of the command's tag (rejects typed when it cannot verify), then at
   * most 5 s for the agent to report the exit; an agent that does not is stuck and is replaced (the exit is known).
   * Without: `kill_command` to the agent, and the whole agent killed if it does not report the exit within 5 s.
   */
  private async kill(): Promise<void> {
    if (this.settled) return;
    this.killRequested = true;
    if (this.tag && this.enforcement) {
      await this.enforcement.killTagged(this.tag);
      this.killVerified = true;
      if (await this.exitReported()) return;
      this.finish({ value: { exitCode: 137, outOfMemoryKilled: false } });
      await this.session.abandon("the sandbox agent did not report a killed command's exit; it was killed");
      return;
    }
    if (!this.session.notify({ type: "kill_command", target: this.id })) return;
    if (await this.exitReported()) return;
    await this.session.abandon("the sandbox agent did not confirm a command's kill; it was killed");
  }

  /** Whether the exit settles within `EXIT_AFTER_KILL_MS` (the kill is done: the exit gets that grace). */
  private async exitReported(): Promise<boolean> {
    const seen = this.exit.then(
      () => true,
      () => true,
    );
    const outcome = await settleWithinGrace(seen, Promise.resolve(), EXIT_AFTER_KILL_MS);
    return outcome.settled;
  }
}
