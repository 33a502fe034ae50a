/**
 * envd's `process.Process` service: commands run with `docker exec` inside the
 * sandbox container, one exec per command. `SendSignal` signals the one
 * process, as envd does (Go's `cmd.Process.Signal`): its children survive it.
 * (Each exec is its own session, Docker makes the exec'd process a session
 * leader, where envd's commands share envd's session; the session is only used
 * to tell whether something of the command still holds its output.)
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { runExec, sessionHasProcesses as sessionHasProcessesIn, startExec, type RunningExec } from "@sbx/emulator-kit";
import type { ContainerSandbox } from "./container-sandbox.js";
import { homeDirectoryOf } from "./container-sandbox.js";
import { ConnectProtocolError, ServerStream, readRequestMessage, sendUnaryResponse, toConnectError } from "./connect-protocol.js";
import { userFromRequest } from "./envd-authentication.js";
import { ptySize, startTerminalExec, type PtyRequest, type PtySize } from "./envd-pty.js";

/** `ProcessConfig` of envd. */
export interface ProcessConfig {
  cmd: string;
  args?: string[];
  envs?: Record<string, string>;
  cwd?: string;
}

/** A `ProcessEvent.event` value as JSON. */
type ProcessEventPayload =
  | { start: { pid: number } }
  | { data: { stdout: string } | { stderr: string } | { pty: string } }
  | { end: { exitCode: number; exited: boolean; status: string; error?: string } }
  | { keepalive: Record<string, never> };

export type { ProcessEventPayload };

type Subscriber = (payload: ProcessEventPayload) => void;

/** `ProcessSelector` JSON: `{pid}` or `{tag}`. */
interface ProcessSelector {
  pid?: number;
  tag?: string;
}

/** The signals envd's `SendSignal` accepts (the `Signal` enum, by name or number); anything else is `unimplemented` there. */
const SIGNAL_NUMBERS: Record<string, number> = { SIGNAL_SIGKILL: 9, SIGNAL_SIGTERM: 15, "9": 9, "15": 15 };

/** Turns the SDK's signal (enum name or number) into a number, refusing what envd refuses. */
export function signalNumber(signal: unknown): number {
  const known = SIGNAL_NUMBERS[String(signal)];
  if (known) return known;
  throw new ConnectProtocolError("unimplemented", `invalid signal: ${String(signal)}`);
}

/**
 * Bash script run as root that signals a whole session: every process whose
 * process group or session id matches (catches children that changed group),
 * each once per pass. SIGKILL makes a second pass for processes forked meanwhile.
 */
const KILL_SESSION_SCRIPT = `
signal="$1"; session="$2"; passes="$3"
for pass in $(seq "$passes"); do
  for directory in /proc/[0-9]*; do
    read -r line < "$directory/stat" 2>/dev/null || continue
    rest="\${line##*) }"
    set -- $rest
    if [ "$4" = "$session" ] || [ "$3" = "$session" ]; then kill -s "$signal" "\${directory#/proc/}" 2>/dev/null; fi
  done
done
exit 0
`;

/** True when some process of the session still runs (e.g. a background child holding stdout). */
export async function sessionHasProcesses(sandbox: ContainerSandbox, sessionId: number): Promise<boolean> {
  return sessionHasProcessesIn(sandbox.container, sessionId);
}

/** Signals one process inside the container (as root, like envd). */
export async function signalProcess(sandbox: ContainerSandbox, pid: number, signal: number): Promise<void> {
  await runExec(sandbox.container, {
    command: ["/bin/sh", "-c", 'kill -s "$1" "$2" 2>/dev/null; exit 0', "e2b-emulator-signal", String(signal), String(pid)],
    user: "root",
  });
}

/** Signals every process of a session inside the container (used for the code interpreter's own processes). */
export async function signalSession(sandbox: ContainerSandbox, sessionId: number, signal: number): Promise<void> {
  await runExec(sandbox.container, {
    command: ["/bin/bash", "-c", KILL_SESSION_SCRIPT, "e2b-emulator-kill", String(signal), String(sessionId), signal === 9 ? "2" : "1"],
    user: "root",
  });
}

/** A command started through `Start`, alive until its exec exits. */
export class ManagedProcess {
  pid = 0;
  /** True once the exec exited and the end event was published. */
  exited = false;
  private readonly subscribers = new Set<Subscriber>();
  private buffered: ProcessEventPayload[] | undefined = [];
  private running: RunningExec | undefined;
  private signalSent: number | undefined;
  private blockedSubscribers = 0;

  constructor(
    readonly registry: ProcessRegistry,
    readonly config: ProcessConfig,
    readonly tag: string | undefined,
    readonly stdinEnabled: boolean,
    /** The terminal's size for a process started with `pty` (envd's PTY mode: one output stream, input through `SendInput.pty`). */
    readonly terminalSize?: PtySize,
  ) {}

  /** What every exec of this process runs with (user, working directory, environment). */
  private execSettings(user: string) {
    const sandbox = this.registry.sandbox;
    return {
      user,
      workingDirectory: this.config.cwd || homeDirectoryOf(user),
      environment: { HOME: homeDirectoryOf(user), USER: user, ...sandbox.environment, ...(this.config.envs ?? {}) },
    };
  }

  /** Starts the exec; resolves once the pid is known. */
  async start(user: string): Promise<void> {
    const sandbox = this.registry.sandbox;
    if (this.terminalSize) {
      const started = await startTerminalExec(sandbox.container, {
        ...this.execSettings(user),
        command: [this.config.cmd, ...(this.config.args ?? [])],
        size: this.terminalSize,
        onOutput: (chunk) => this.publish({ data: { pty: chunk.toString("base64") } }),
        onExit: (exitCode) => this.finish(exitCode),
      });
      this.running = started.running;
      this.pid = started.pid;
      return;
    }
    let pidLine: Buffer = Buffer.alloc(0);
    let pidKnown = false;
    const earlyStderr: Buffer[] = [];
    let resolvePid!: () => void;
    let rejectPid!: (error: Error) => void;
    const pidReady = new Promise<void>((resolve, reject) => {
      resolvePid = resolve;
      rejectPid = reject;
    });
    this.running = await startExec(
      sandbox.container,
      {
        // The wrapper prints its pid (== session id, Docker execs are session leaders) then becomes the command.
        command: ["/bin/sh", "-c", 'echo "$$"; exec "$@"', "e2b-process", this.config.cmd, ...(this.config.args ?? [])],
        ...this.execSettings(user),
        attachStdin: this.stdinEnabled,
      },
      {
        onStdout: (chunk) => {
          if (pidKnown) return this.publish({ data: { stdout: chunk.toString("base64") } });
          pidLine = Buffer.concat([pidLine, chunk]);
          const newline = pidLine.indexOf(10);
          if (newline < 0) return;
          const firstLine = pidLine.subarray(0, newline).toString("utf8").trim();
          if (!/^\d+$/.test(firstLine)) {
            // Docker reports exec failures (bad cwd or user) as output, not as a pid.
            earlyStderr.unshift(pidLine);
            pidLine = Buffer.alloc(0);
            return;
          }
          this.pid = Number(firstLine);
          pidKnown = true;
          resolvePid();
          // Docker copies stdout and stderr independently, so stderr may overtake the pid line.
          for (const early of earlyStderr.splice(0)) this.publish({ data: { stderr: early.toString("base64") } });
          const rest = pidLine.subarray(newline + 1);
          if (rest.length > 0) this.publish({ data: { stdout: rest.toString("base64") } });
        },
        onStderr: (chunk) => {
          if (!pidKnown) earlyStderr.push(Buffer.from(chunk));
          else this.publish({ data: { stderr: chunk.toString("base64") } });
        },
      },
    );
    const running = this.running;
    void running.exitCode.then(async (exitCode) => {
      // The exit can be seen (by polling the exec) before the pid line has arrived on stdout: let the output drain first.
      if (!pidKnown) await Promise.race([running.outputEnded, new Promise((resolve) => setTimeout(resolve, 2_000))]);
      if (!pidKnown) {
        const message = Buffer.concat(earlyStderr).toString("utf8").trim();
        const code = /chdir|no such file|unable to find user|no matching entries/i.test(message) ? "invalid_argument" : "internal";
        rejectPid(new ConnectProtocolError(code, `failed to start process (exit ${exitCode}): ${message}`));
        return;
      }
      // Deliver all output, but a background child may keep stdout open forever. Usually Docker
      // closes the stream right after the exit; if not, look whether anything of the session is
      // still alive: if so, stop once the pipe is quiet; if not, the rest is just in flight.
      const endedPromptly = await Promise.race([
        running.outputEnded.then(() => true),
        new Promise<boolean>((resolve) => setTimeout(() => resolve(false), 50)),
      ]);
      if (!endedPromptly) {
        const sessionAlive = await sessionHasProcesses(sandbox, this.pid).catch(() => true);
        if (sessionAlive) await running.waitForOutputToSettle(150, 5_000);
        else await running.waitForOutputToSettle(10_000, 30_000);
      }
      running.detach();
      this.finish(exitCode);
    });
    await pidReady;
  }

  private finish(exitCode: number): void {
    const killedBySignal = this.signalSent !== undefined && (exitCode === 128 + this.signalSent || exitCode === this.signalSent);
    // Mirrors envd (Go's exec): a signal gives exitCode -1 and "signal: killed"; `error` is
    // cmd.Wait()'s message, so it is set for any unsuccessful end.
    const status = killedBySignal ? (this.signalSent === 9 ? "signal: killed" : "signal: terminated") : `exit status ${exitCode}`;
    const end = killedBySignal
      ? { exitCode: -1, exited: false, status, error: status }
      : { exitCode, exited: true, status, ...(exitCode !== 0 ? { error: status } : {}) };
    this.exited = true;
    this.registry.forget(this);
    this.publish({ end });
    this.subscribers.clear();
  }

  private publish(payload: ProcessEventPayload): void {
    if (this.buffered) {
      this.buffered.push(payload);
      return;
    }
    for (const subscriber of this.subscribers) subscriber(payload);
  }

  /** Streams this process' events to a Connect response (first frame `start`). */
  attach(stream: ServerStream): void {
    stream.send({ event: { start: { pid: this.pid } } });
    // One wait for drain per blocked stream: chunks already read before the pause still arrive while it waits.
    let waitingForDrain = false;
    const subscriber: Subscriber = (payload) => {
      const writable = stream.send({ event: payload });
      if ("end" in payload) {
        stream.end();
        return;
      }
      if (!writable && this.running && !waitingForDrain) {
        waitingForDrain = true;
        this.blockedSubscribers++;
        this.running.pause();
        void stream.waitForDrain().then(() => {
          waitingForDrain = false;
          this.blockedSubscribers--;
          if (this.blockedSubscribers === 0) this.running?.resume();
        });
      }
    };
    this.subscribers.add(subscriber);
    // Disconnecting only unsubscribes: the process keeps running, like envd.
    stream.onClose(() => this.subscribers.delete(subscriber));
    const buffered = this.buffered;
    this.buffered = undefined;
    for (const payload of buffered ?? []) subscriber(payload);
  }

  /** Stops buffering events when nobody attached (e.g. the Start caller vanished). */
  releaseBuffer(): void {
    this.buffered = undefined;
  }

  /**
   * Writes to the process' stdin and resolves once the bytes left for the container, as envd's `SendInput` answers
   * only after its blocking write into the process's stdin pipe (`Handler.WriteStdin`, e2b-dev/infra
   * packages/envd/internal/services/process/handler): a process that stops reading holds its writer, not the emulator's memory.
   */
  writeStdin(data: Buffer): Promise<void> {
    if (!this.stdinEnabled || !this.running) {
      throw new ConnectProtocolError("failed_precondition", "stdin is not enabled for this process (start it with stdin: true)");
    }
    const connection = this.running.connection;
    return new Promise((resolve, reject) => {
      connection.write(data, (error) => {
        if (error) reject(new ConnectProtocolError("internal", `error writing to stdin: ${error.message}`));
        else resolve();
      });
    });
  }

  /** Sends EOF to the process' stdin. */
  closeStdin(): void {
    if (!this.stdinEnabled || !this.running) {
      throw new ConnectProtocolError("failed_precondition", "stdin is not enabled for this process");
    }
    this.running.closeStdin();
  }

  /** Writes to the process' terminal (only a process started with `pty`, see envd-pty.ts). */
  writePty(data: Buffer): void {
    if (!this.terminalSize || !this.running) throw new ConnectProtocolError("failed_precondition", "the process has no PTY (start it with pty)");
    this.running.connection.write(data);
  }

  /** Resizes the process' terminal (only a process started with `pty`). */
  async resize(size: PtySize): Promise<void> {
    if (!this.terminalSize || !this.running) throw new ConnectProtocolError("failed_precondition", "the process has no PTY (start it with pty)");
    await this.running.resize(size);
  }

  /** Signals the process itself (not its children), like envd. */
  async signal(signal: number): Promise<void> {
    this.signalSent = signal;
    await signalProcess(this.registry.sandbox, this.pid, signal);
  }

  /** Ends streams without waiting for Docker (sandbox killed). */
  abandon(): void {
    this.running?.detach();
  }

  /** `ProcessInfo` JSON. */
  toProcessInfo(): { config: ProcessConfig; pid: number; tag?: string } {
    return {
      config: { cmd: this.config.cmd, args: this.config.args ?? [], envs: this.config.envs ?? {}, cwd: this.config.cwd },
      pid: this.pid,
      ...(this.tag ? { tag: this.tag } : {}),
    };
  }
}

/** The running commands of one sandbox. */
export class ProcessRegistry {
  private readonly processes = new Map<number, ManagedProcess>();

  constructor(readonly sandbox: ContainerSandbox) {}

  /** Forgets an exited process. */
  forget(process: ManagedProcess): void {
    if (this.processes.get(process.pid) === process) this.processes.delete(process.pid);
  }

  add(process: ManagedProcess): void {
    this.processes.set(process.pid, process);
  }

  /** Finds a process by `{pid}` or `{tag}`, or throws not_found. */
  find(selector: ProcessSelector | undefined): ManagedProcess {
    if (selector?.pid !== undefined) {
      const process = this.processes.get(Number(selector.pid));
      if (process) return process;
      throw new ConnectProtocolError("not_found", `process with pid ${selector.pid} not found`);
    }
    if (selector?.tag !== undefined) {
      for (const process of this.processes.values()) if (process.tag === selector.tag) return process;
      throw new ConnectProtocolError("not_found", `process with tag ${selector.tag} not found`);
    }
    throw new ConnectProtocolError("invalid_argument", "process selector needs pid or tag");
  }

  list(): ManagedProcess[] {
    return [...this.processes.values()];
  }

  /** Called when the sandbox dies. */
  closeAll(): void {
    for (const process of this.processes.values()) process.abandon();
  }
}

function keepaliveSeconds(request: IncomingMessage): number {
  const value = Number(request.headers["keepalive-ping-interval"]);
  return Number.isFinite(value) && value > 0 ? value : 0;
}

/** Handles `POST /process.Process/<method>`. */
export async function handleProcessService(
  sandbox: ContainerSandbox,
  method: string,
  request: IncomingMessage,
  response: ServerResponse,
): Promise<void> {
  const registry = sandbox.processes;
  switch (method) {
    case "Start": {
      const message = await readRequestMessage<{ process?: ProcessConfig; pty?: PtyRequest; tag?: string; stdin?: boolean }>(request);
      if (!message.process?.cmd) throw new ConnectProtocolError("invalid_argument", "process.cmd is required");
      const terminalSize = message.pty ? ptySize(message.pty) : undefined;
      const process = new ManagedProcess(registry, message.process, message.tag, message.stdin === true || terminalSize !== undefined, terminalSize);
      await process.start(userFromRequest(request));
      if (!process.exited) registry.add(process);
      if (response.destroyed) {
        process.releaseBuffer();
        return;
      }
      const stream = new ServerStream(response, { event: { keepalive: {} } }, keepaliveSeconds(request));
      process.attach(stream);
      return;
    }
    case "Connect": {
      const message = await readRequestMessage<{ process?: ProcessSelector }>(request);
      const stream = new ServerStream(response, { event: { keepalive: {} } }, keepaliveSeconds(request));
      try {
        registry.find(message.process).attach(stream);
      } catch (error) {
        stream.end(toConnectError(error));
      }
      return;
    }
    case "List":
      await readRequestMessage(request);
      sendUnaryResponse(response, { processes: registry.list().map((process) => process.toProcessInfo()) });
      return;
    case "SendInput": {
      const message = await readRequestMessage<{ process?: ProcessSelector; input?: { stdin?: string; pty?: string } }>(request);
      const process = registry.find(message.process);
      if (message.input?.pty !== undefined) {
        process.writePty(Buffer.from(message.input.pty, "base64"));
        sendUnaryResponse(response, {});
        return;
      }
      await process.writeStdin(Buffer.from(message.input?.stdin ?? "", "base64"));
      sendUnaryResponse(response, {});
      return;
    }
    case "CloseStdin": {
      const message = await readRequestMessage<{ process?: ProcessSelector }>(request);
      registry.find(message.process).closeStdin();
      sendUnaryResponse(response, {});
      return;
    }
    case "SendSignal": {
      const message = await readRequestMessage<{ process?: ProcessSelector; signal?: unknown }>(request);
      const process = registry.find(message.process);
      await process.signal(signalNumber(message.signal));
      sendUnaryResponse(response, {});
      return;
    }
    case "Update": {
      const message = await readRequestMessage<{ process?: ProcessSelector; pty?: PtyRequest }>(request);
      const process = registry.find(message.process);
      if (message.pty) await process.resize(ptySize(message.pty));
      sendUnaryResponse(response, {});
      return;
    }
    default:
      throw new ConnectProtocolError("unimplemented", `process.Process/${method} is not supported by the E2B emulator`);
  }
}
