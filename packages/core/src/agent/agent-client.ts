import { defaultEnvironment } from "../runtime/default-environment.js";
import { AbortedError, CodeInterpreterLostError, InvalidArgumentError, ProviderError, RuntimeMissingError, SbxError } from "../errors/index.js";
import type { CodeRequest, DriverExecution, SandboxDriverV1, SpawnedProcess, SpawnRequest } from "../v1/provider.js";
import type { ExecutionError, ExecutionResult } from "../v1/sandbox.js";
import { AgentFrameDecoder, AgentProtocolViolation, encodeAgentFrame, type AgentFrame } from "./agent-frames.js";
import { agentCommandLine, SBX_AGENT_PROTOCOL } from "./agent-source.js";
import { commandOutOfMemoryReport } from "../posix/out-of-memory-probe.js";

/** Options of `SandboxAgentClient`. */
export interface SandboxAgentClientOptions {
  /** Backend name for error messages, for example `"docker"`. */
  readonly backend: string;
  /** How long the agent may take to say hello after its spawn, in ms. Default 30000 (a loaded machine is slow). */
  readonly startTimeoutMs?: number;
  /** After an interrupt (timeout, abort), how long a cell may take to stop before its interpreter is killed, in ms. Default 2000. */
  readonly interruptGraceMs?: number;
  /** Output bytes per stream the agent forwards for one run; the rest is dropped inside the sandbox. Default 16 MiB. */
  readonly outputLimitBytes?: number;
  /**
   * The backend's own enforcement, so that commands through the agent keep it (adr/0025): each command carries an
   * audit tag the backend's verified kill finds, and a SIGKILL exit is checked for the out-of-memory killer. Without
   * it, commands through the agent are killed by the agent itself (verified only within the command's session).
   */
  readonly enforcement?: AgentCommandEnforcement;
}

/**
 * What a backend gives the sandbox agent so that commands through it are held to the same rules as the backend's own
 * spawn (adr/0025): verified kills by audit tag, the out-of-memory report, and the lost-sandbox rule.
 */
export interface AgentCommandEnforcement {
  /**
   * Starts the agent itself, like the driver's `spawn` but with the process's audit tag (`/proc/self/loginuid`)
   * left unset, so that each command the agent starts can set its own; `kill()` must end the agent and everything
   * it started for code (the agent tags its interpreters with `SBX_AGENT_INTERPRETER_TAG` when that variable is set).
   */
  spawnAgent(request: SpawnRequest): Promise<SpawnedProcess>;
  /** A fresh audit tag for one command (a decimal number the kernel accepts as a loginuid). */
  newTag(): string;
  /**
   * Kills every process carrying `tag` and resolves only once the backend verified none is left; rejects with a
   * typed error otherwise (the backend escalates, as its own kill does).
   */
  killTagged(tag: string): Promise<void>;
  /**
   * After a command died of a SIGKILL sbx did not send: whether the sandbox's out-of-memory kill counter grew since
   * it was last read (null: unknown). A grown counter does not say the command was the victim (adr/0030).
   */
  outOfMemoryKilled(): Promise<boolean | null>;
  /** The backend's lost-sandbox error when the sandbox is gone (asked after a failure), else undefined. */
  lostError(cause?: unknown): Promise<Error | undefined>;
  /** Variables every command gets beneath its own (Docker: the egress proxy's). Default none. */
  readonly environment?: Readonly<Record<string, string>>;
}

/** A run's extras beyond `CodeRequest`: an agent-side deadline and an output limit. */
export interface AgentRunOptions {
  /** The agent interrupts the run after this many ms (then kills the interpreter after the grace). */
  readonly deadlineMs?: number;
  /** Output bytes per stream forwarded for this run. */
  readonly outputLimitBytes?: number;
}

type ClientSettings = Required<Omit<SandboxAgentClientOptions, "enforcement">> & Pick<SandboxAgentClientOptions, "enforcement">;

const MAX_RESULTS_PER_RUN = 1000;
/** How long the agent may take to report a command's exit after the backend verified its kill. */
const EXIT_AFTER_KILL_MS = 5_000;
/** While commands run through the agent: how often it is pinged, and how long it may leave a ping unanswered. */
const COMMAND_HEARTBEAT_MS = 2_000;
const AGENT_ANSWER_MS = 10_000;
const STDERR_TAIL_BYTES = 4096;
const LOST_MEMORY = 1024;

interface PendingRequest {
  readonly contextId: string | null;
  onFrame(frame: AgentFrame): void;
  fail(error: Error): void;
}

/** One running agent process. */
class AgentSession {
  readonly pending = new Map<number, PendingRequest>();
  readonly contexts = new Set<string>();
  /** Why the session ended, once it has. */
  ended: string | undefined;
  hello: Record<string, unknown> | undefined;
  private nextId = 1;
  private stderrTail = "";
  private readonly decoder = new AgentFrameDecoder();

  constructor(
    readonly process: SpawnedProcess | undefined,
    private readonly backend: string,
    private readonly onEnd: (session: AgentSession, reason: string) => void,
  ) {}

  static async start(
    driver: Pick<SandboxDriverV1, "spawn" | "workspace">,
    options: ClientSettings,
    onEnd: (session: AgentSession, reason: string) => void,
  ): Promise<AgentSession> {
    let session: AgentSession | undefined;
    const early: Uint8Array[] = [];
    const earlyErr: Uint8Array[] = [];
    const spawn = options.enforcement
      ? (request: SpawnRequest) => options.enforcement!.spawnAgent(request)
      : (request: SpawnRequest) => driver.spawn(request);
    const process = await spawn({
      command: agentCommandLine(),
      cwd: driver.workspace,
      env: { ...defaultEnvironment(driver.workspace), PYTHONUNBUFFERED: "1" },
      stdin: true,
      onStdout: (chunk) => (session ? session.receive(chunk) : early.push(chunk.slice())),
      onStderr: (chunk) => (session ? session.receiveStderr(chunk) : earlyErr.push(chunk.slice())),
    });
    session = new AgentSession(process, options.backend, onEnd);
    const hello = new Promise<Record<string, unknown>>((resolve, reject) => {
      session!.pending.set(0, {
        contextId: null,
        onFrame: (frame) => {
          session!.pending.delete(0);
          if (frame.header.type === "hello") resolve(frame.header);
          else reject(new AgentProtocolViolation(`expected hello, got ${frame.header.type}`));
        },
        fail: reject,
      });
    });
    for (const chunk of earlyErr) session.receiveStderr(chunk);
    for (const chunk of early) session.receive(chunk);
    process.exit.then(
      ({ exitCode }) =>
        session!.end(
          `the sandbox agent exited (exit code ${exitCode})${session!.stderrTail ? `: ${session!.stderrTail.trim().slice(-500)}` : ""}`,
          exitCode,
        ),
      (error: unknown) => session!.end(`the sandbox agent's process failed: ${error instanceof Error ? error.message : String(error)}`),
    );
    let timer: NodeJS.Timeout | undefined;
    try {
      const greeting = await Promise.race([
        hello,
        new Promise<never>(
          (_, reject) => (timer = setTimeout(() => reject(new Error(`no hello within ${options.startTimeoutMs} ms`)), options.startTimeoutMs)),
        ),
      ]);
      if (greeting.protocol !== SBX_AGENT_PROTOCOL)
        throw new Error(`the agent speaks protocol ${String(greeting.protocol)}, this @sbx/core speaks ${SBX_AGENT_PROTOCOL}`);
      session.hello = greeting;
      return session;
    } catch (error) {
      const exit = session.exitCode;
      await session.kill();
      if (exit === 127 || /python3 not found/.test(session.stderrTail))
        throw new RuntimeMissingError({
          backend: options.backend,
          runtime: "python3",
          detail: "the sbx sandbox agent runs with the image's python3",
        });
      if (exit === 3 || /python3 >= 3\.8 is required/.test(session.stderrTail))
        throw new RuntimeMissingError({ backend: options.backend, runtime: "python3 >= 3.8", detail: session.stderrTail.trim().slice(-200) });
      if (SbxError.isInstance(error)) throw error;
      throw new ProviderError({
        backend: options.backend,
        retryable: true,
        cause: error,
        message: `The sbx sandbox agent did not start: ${error instanceof Error ? error.message : String(error)}${session.stderrTail ? ` (stderr: ${session.stderrTail.trim().slice(-300)})` : ""}`,
      });
    } finally {
      clearTimeout(timer);
    }
  }

  exitCode: number | undefined;

  private liveCommands = 0;
  private heartbeat: NodeJS.Timeout | undefined;
  private unansweredSince: number | undefined;

  /**
   * A command through the agent started: while any runs, the agent is pinged every 2 s, and one that has not answered
   * for 10 s (stopped from inside, hung) is killed, so its commands fail typed instead of waiting forever for an exit
   * report that cannot come.
   */
  commandStarted(): void {
    this.liveCommands++;
    if (this.heartbeat || this.ended) return;
    this.heartbeat = setInterval(() => this.beat(), COMMAND_HEARTBEAT_MS);
    this.heartbeat.unref();
  }

  /** A command through the agent ended (see `commandStarted`). */
  commandEnded(): void {
    this.liveCommands = Math.max(0, this.liveCommands - 1);
    if (this.liveCommands === 0) this.stopHeartbeat();
  }

  private stopHeartbeat(): void {
    clearInterval(this.heartbeat);
    this.heartbeat = undefined;
    this.unansweredSince = undefined;
  }

  private beat(): void {
    if (this.ended) return this.stopHeartbeat();
    if (this.unansweredSince !== undefined) {
      if (Date.now() - this.unansweredSince < AGENT_ANSWER_MS) return;
      this.end(`the sandbox agent did not answer for ${AGENT_ANSWER_MS} ms while commands ran (stopped or hung); it was killed`);
      void this.kill();
      return;
    }
    this.unansweredSince = Date.now();
    try {
      const id = this.request(
        null,
        { type: "ping" },
        {
          onFrame: () => {
            this.pending.delete(id);
            this.unansweredSince = undefined;
          },
          fail: () => {},
        },
      );
    } catch {
      // Ended meanwhile.
    }
  }

  receiveStderr(chunk: Uint8Array): void {
    this.stderrTail = (this.stderrTail + Buffer.from(chunk).toString("utf8")).slice(-STDERR_TAIL_BYTES);
  }

  receive(chunk: Uint8Array): void {
    if (this.ended) return;
    let frames: AgentFrame[];
    try {
      frames = this.decoder.push(chunk);
    } catch (error) {
      this.end(`the sandbox agent broke the protocol (${error instanceof Error ? error.message : String(error)}); it was killed`);
      void this.kill();
      return;
    }
    for (const frame of frames) {
      try {
        this.dispatch(frame);
      } catch {
        // A listener defect must not throw into the backend's stream callback.
      }
    }
  }

  private dispatch(frame: AgentFrame): void {
    const { header } = frame;
    if (header.type === "context_lost" && typeof header.context === "string") {
      this.contexts.delete(header.context);
      return;
    }
    const id = typeof header.id === "number" ? header.id : undefined;
    if (id === undefined) return; // Unsolicited frames of unknown types are ignored (forward compatible).
    this.pending.get(id)?.onFrame(frame);
  }

  /** Sends a request; `listener` gets every frame with its id until it removes itself. */
  request(contextId: string | null, header: Record<string, unknown>, listener: Omit<PendingRequest, "contextId">): number {
    if (this.ended) throw this.lostError(contextId, this.ended);
    const id = this.nextId++;
    this.pending.set(id, { contextId, ...listener });
    this.send({ ...header, id });
    return id;
  }

  send(header: Record<string, unknown>, body?: Uint8Array): void {
    if (this.ended || !this.process) return;
    this.process.writeStdin(encodeAgentFrame(header, body)).catch((error: unknown) => {
      this.end(`writing to the sandbox agent failed: ${error instanceof Error ? error.message : String(error)}`);
      void this.kill();
    });
  }

  lostError(contextId: string | null, reason: string): CodeInterpreterLostError {
    return new CodeInterpreterLostError({ backend: this.backend, contextId, reason });
  }

  end(reason: string, exitCode?: number): void {
    if (exitCode !== undefined) this.exitCode = exitCode;
    if (this.ended) return;
    this.ended = reason;
    this.stopHeartbeat();
    const pending = [...this.pending.values()];
    this.pending.clear();
    for (const request of pending) request.fail(this.lostError(request.contextId, reason));
    this.onEnd(this, reason);
  }

  async kill(): Promise<void> {
    if (!this.process) return;
    await this.process.kill().catch(() => {});
  }
}

/**
 * Host side of the sbx sandbox agent: starts it lazily through the driver's `spawn` (one long-lived process), and
 * runs code in it, one-shot or in persistent contexts. Everything from the agent is bounded (frame size, output per
 * run, result count) and never throws into the backend's callbacks. When the agent dies, in-flight calls fail with
 * `CodeInterpreterLostError`, its contexts are reported lost, and the next call starts a new agent.
 */
export class SandboxAgentClient {
  private session: AgentSession | undefined;
  private starting: Promise<AgentSession> | undefined;
  private readonly owners = new Map<string, AgentSession>();
  private readonly lost = new Map<string, string>();
  private readonly options: ClientSettings;
  private stopped = false;
  private startedForCommands = false;

  constructor(
    private readonly driver: Pick<SandboxDriverV1, "spawn" | "workspace">,
    options: SandboxAgentClientOptions,
  ) {
    this.options = { startTimeoutMs: 30_000, interruptGraceMs: 2_000, outputLimitBytes: 16 * 1024 * 1024, ...options };
  }

  /** The running agent's `hello` (protocol, agent and Python versions, pid), or undefined before the first call. */
  get hello(): Readonly<Record<string, unknown>> | undefined {
    return this.session && !this.session.ended ? this.session.hello : undefined;
  }

  private async current(): Promise<AgentSession> {
    if (this.stopped) throw new ProviderError({ backend: this.options.backend, message: "The sandbox agent was stopped with its sandbox." });
    if (this.session && !this.session.ended) return this.session;
    this.starting ??= AgentSession.start(this.driver, this.options, (session, reason) => this.onSessionEnd(session, reason)).then(
      (session) => {
        this.starting = undefined;
        if (session.ended) throw session.lostError(null, session.ended);
        this.session = session;
        return session;
      },
      (error: unknown) => {
        this.starting = undefined;
        throw error;
      },
    );
    return this.starting;
  }

  private onSessionEnd(session: AgentSession, reason: string): void {
    for (const [contextId, owner] of this.owners) {
      if (owner !== session) continue;
      this.owners.delete(contextId);
      this.remember(contextId, reason);
    }
    if (this.session === session) this.session = undefined;
  }

  private remember(contextId: string, reason: string): void {
    this.lost.set(contextId, reason);
    while (this.lost.size > LOST_MEMORY) this.lost.delete(this.lost.keys().next().value!);
  }

  /** Creates a persistent Python interpreter (a separate process in the sandbox); returns its id. */
  async createContext(request: { language: string; cwd: string; signal?: AbortSignal }): Promise<{ id: string; language: string }> {
    if (request.signal?.aborted) throw new AbortedError({ backend: this.options.backend, cause: request.signal.reason });
    const session = await this.current();
    let abandoned = false;
    let timer: NodeJS.Timeout | undefined;
    let onAbort: (() => void) | undefined;
    try {
      const contextId = await new Promise<string>((resolve, reject) => {
        const id = session.request(
          null,
          { type: "create_context", language: request.language, cwd: request.cwd },
          {
            onFrame: (frame) => {
              session.pending.delete(id);
              if (frame.header.type === "context_created" && typeof frame.header.context === "string") {
                // Created after the caller gave up: end it rather than leave an interpreter nobody can reach.
                if (abandoned) session.send({ type: "close_context", id: 0, context: frame.header.context });
                resolve(frame.header.context);
              } else reject(this.requestError(frame, null));
            },
            fail: reject,
          },
        );
        // Bounded: an agent that does not answer (stopped, hung) is killed, and the call fails typed.
        timer = setTimeout(() => {
          session.end(`the sandbox agent did not answer create_context within ${this.options.startTimeoutMs} ms; it was killed`);
          void session.kill();
        }, this.options.startTimeoutMs);
        onAbort = () => {
          abandoned = true;
          reject(new AbortedError({ backend: this.options.backend, cause: request.signal?.reason }));
        };
        request.signal?.addEventListener("abort", onAbort, { once: true });
      });
      session.contexts.add(contextId);
      this.owners.set(contextId, session);
      return { id: contextId, language: request.language };
    } finally {
      clearTimeout(timer);
      if (onAbort) request.signal?.removeEventListener("abort", onAbort);
    }
  }

  /** Ends a context's interpreter (its later runs raise `CodeInterpreterLostError`). */
  async closeContext(contextId: string): Promise<void> {
    const session = this.owners.get(contextId);
    if (!session || session.ended) return;
    this.owners.delete(contextId);
    this.remember(contextId, "the context was closed");
    await new Promise<void>((resolve) => {
      const id = session.request(
        null,
        { type: "close_context", context: contextId },
        { onFrame: () => (session.pending.delete(id), resolve()), fail: () => resolve() },
      );
    });
  }

  /** Runs code, streaming output to the request's callbacks; resolves with the error and the rich results. */
  async run(request: CodeRequest, extra: AgentRunOptions = {}): Promise<DriverExecution> {
    const contextId = request.contextId ?? null;
    let session: AgentSession;
    if (contextId !== null) {
      const owner = this.owners.get(contextId);
      if (!owner || owner.ended) {
        const reason = this.lost.get(contextId) ?? owner?.ended;
        if (reason) throw new CodeInterpreterLostError({ backend: this.options.backend, contextId, reason });
        throw new InvalidArgumentError({
          backend: this.options.backend,
          field: "options.contextId",
          message: `Invalid options.contextId: no code context ${JSON.stringify(contextId)} in this sandbox. Create one with createCodeContext().`,
        });
      }
      session = owner;
    } else {
      session = await this.current();
    }
    if (request.signal.aborted) return { error: null, results: null };
    const results: ExecutionResult[] = [];
    // Results past MAX_RESULTS_PER_RUN are not kept here; they are counted with the agent's own drops.
    let resultsDroppedHere = 0;
    const droppedBy = (header: Record<string, unknown>) => {
      const dropped = (header.dropped ?? {}) as { stdout?: unknown; stderr?: unknown; results?: unknown };
      return {
        droppedBytes: { stdout: Number(dropped.stdout) || 0, stderr: Number(dropped.stderr) || 0 },
        droppedResults: (Number(dropped.results) || 0) + resultsDroppedHere,
      };
    };
    const stdoutDecoder = new TextDecoder();
    const stderrDecoder = new TextDecoder();
    const grace = this.options.interruptGraceMs;
    return new Promise<DriverExecution>((resolve, reject) => {
      let watchdog: NodeJS.Timeout | undefined;
      const cleanup = () => {
        request.signal.removeEventListener("abort", onAbort);
        if (watchdog) clearTimeout(watchdog);
      };
      const flush = () => {
        const out = stdoutDecoder.decode();
        const err = stderrDecoder.decode();
        if (out) request.onStdout(out);
        if (err) request.onStderr(err);
      };
      let id = 0;
      const onAbort = () => {
        try {
          const cancelId = session.request(null, { type: "cancel", target: id }, { onFrame: () => session.pending.delete(cancelId), fail: () => {} });
        } catch {
          // The session already ended; the run's own listener has failed with it.
        }
        // The agent interrupts, then kills after the grace. If it does not answer at all (stopped, hung), the whole
        // agent is killed through the backend, which ends every process it started.
        watchdog = setTimeout(() => {
          session.end("the sandbox agent did not answer a cancel; it was killed");
          void session.kill();
        }, grace + 5_000);
      };
      try {
        id = session.request(
          contextId,
          {
            type: "run",
            context: contextId,
            code: request.code,
            env: request.env,
            cwd: request.cwd,
            deadline_ms: extra.deadlineMs ?? null,
            grace_ms: grace,
            output_limit_bytes: Math.min(extra.outputLimitBytes ?? Number.POSITIVE_INFINITY, this.options.outputLimitBytes),
          },
          {
            onFrame: (frame) => {
              const { header, body } = frame;
              if (header.type === "stdout" || header.type === "stderr") {
                const text = (header.type === "stdout" ? stdoutDecoder : stderrDecoder).decode(body, { stream: true });
                if (text) (header.type === "stdout" ? request.onStdout : request.onStderr)(text);
              } else if (header.type === "result") {
                if (results.length < MAX_RESULTS_PER_RUN) results.push(toResult(header));
                else resultsDroppedHere++;
              } else if (header.type === "done") {
                session.pending.delete(id);
                cleanup();
                flush();
                if (typeof header.lost === "string") {
                  if (contextId !== null) {
                    this.owners.delete(contextId);
                    this.remember(contextId, header.lost);
                  }
                  if (request.signal.aborted) return resolve({ error: null, results: null });
                  // Killed for memory: a result that cannot pass for success (core reports OutOfMemoryError), like a
                  // command's exit 137; a context's later calls raise CodeInterpreterLostError.
                  if (header.oom === true) return resolve({ error: null, results, outOfMemoryKilled: true, ...droppedBy(header) });
                  return reject(new CodeInterpreterLostError({ backend: this.options.backend, contextId, reason: header.lost }));
                }
                resolve({
                  error: toExecutionError(header.error),
                  results,
                  outOfMemoryKilled: typeof header.oom === "boolean" ? header.oom : null,
                  ...droppedBy(header),
                });
              } else if (header.type === "error") {
                session.pending.delete(id);
                cleanup();
                if (header.code === "context-lost" && contextId !== null) {
                  this.owners.delete(contextId);
                  this.remember(contextId, String(header.message));
                }
                reject(this.requestError(frame, contextId));
              }
            },
            fail: (error) => {
              cleanup();
              flush();
              reject(error);
            },
          },
        );
      } catch (error) {
        reject(error);
        return;
      }
      request.signal.addEventListener("abort", onAbort, { once: true });
      if (request.signal.aborted) onAbort();
    });
  }

  /** True while an agent is running (a command can go through it without paying for its start). */
  get warm(): boolean {
    return this.session !== undefined && !this.session.ended && !this.stopped;
  }

  /**
   * True while an agent is running that can hold commands to the backend's enforcement: with `enforcement`, only an
   * agent whose audit tag is unset (its `hello` says `command_tags: true`) qualifies; without it, any running agent.
   */
  get commandsReady(): boolean {
    if (!this.warm) return false;
    return !this.options.enforcement || this.session!.hello?.command_tags === true;
  }

  /**
   * Starts the agent for commands, once per client: later calls (and a failed start) return at once. The first
   * command of a sandbox whose backend chose to start the agent for commands waits for it.
   */
  async startForCommands(): Promise<void> {
    if (this.startedForCommands || this.stopped) return;
    this.startedForCommands = true;
    await this.current().catch(() => undefined);
  }

  /**
   * Starts a shell command through the running agent (its own session, raw output streamed, stdin). Fails (so the
   * caller can use its plain path) when no suitable agent is running or the agent refuses before the command started.
   * With `enforcement`, the command carries an audit tag: `kill()` is the backend's verified kill of that tag, a
   * SIGKILL exit is checked for the out-of-memory killer, and if the agent dies the command's processes are killed
   * through the backend before its `exit` rejects. Without it, `kill()` asks the agent (resolving once it saw the
   * command exit; if it does not within 5 s, the whole agent is killed through the driver).
   */
  async spawnCommand(request: SpawnRequest): Promise<SpawnedProcess> {
    const session = this.session;
    const enforcement = this.options.enforcement;
    if (!session || session.ended || !this.commandsReady)
      throw new ProviderError({ backend: this.options.backend, message: "No sandbox agent that can run commands is running." });
    const backend = this.options.backend;
    const tag = enforcement?.newTag();
    let settled = false;
    let spawnedYet = false;
    let resolveExit!: (value: { exitCode: number; outOfMemoryKilled?: boolean | null }) => void;
    let rejectExit!: (error: Error) => void;
    const exit = new Promise<{ exitCode: number; outOfMemoryKilled?: boolean | null }>((resolve, reject) => {
      resolveExit = (value) => {
        if (settled) return;
        settled = true;
        if (spawnedYet) session.commandEnded();
        resolve(value);
      };
      rejectExit = (error) => {
        if (settled) return;
        settled = true;
        if (spawnedYet) session.commandEnded();
        reject(error);
      };
    });
    exit.catch(() => {});
    /** Set once sbx asked for the kill: a SIGKILL exit is then ours, not the OOM killer's nor a lost sandbox's. */
    let killRequested = false;
    let killVerified = false;
    const onExit = async (exitCode: number): Promise<void> => {
      if (!enforcement) return resolveExit({ exitCode });
      if (exitCode !== 137) return resolveExit({ exitCode, outOfMemoryKilled: false });
      const counterGrew = await enforcement.outOfMemoryKilled().catch(() => null);
      // A grown counter says the OOM killer ended some process of the sandbox, not this one (adr/0030): unknown.
      const outOfMemoryKilled = commandOutOfMemoryReport(counterGrew);
      if (counterGrew !== true && !killRequested) {
        // A SIGKILL nobody in sbx sent may be the sandbox ending under the command: a lost sandbox, not a result.
        const lost = await enforcement.lostError().catch(() => undefined);
        if (lost) return rejectExit(lost);
      }
      resolveExit({ exitCode, outOfMemoryKilled });
    };
    /** The agent is gone: end the command's processes through the backend, then say why the command failed. */
    const onLost = async (error: Error): Promise<Error> => {
      if (killVerified) return error;
      if (tag && enforcement) {
        try {
          await enforcement.killTagged(tag);
        } catch (killError) {
          return killError instanceof Error ? killError : error;
        }
        const lost = await enforcement.lostError(error).catch(() => undefined);
        if (lost) return lost;
        return new ProviderError({
          backend,
          retryable: true,
          cause: error,
          message: `The sbx sandbox agent running the command was lost (${error.message}); the command's processes were killed (verified). Run it again: the next command uses the plain path.`,
        });
      }
      return new ProviderError({
        backend,
        retryable: true,
        cause: error,
        message: `The sbx sandbox agent running the command was lost: ${error.message}`,
      });
    };
    const started = new Promise<number>((resolve, reject) => {
      let id = 0;
      try {
        id = session.request(
          null,
          {
            type: "spawn",
            command: request.command,
            cwd: request.cwd,
            env: { ...enforcement?.environment, ...request.env },
            stdin: request.stdin,
            ...(tag ? { tag } : {}),
          },
          {
            onFrame: (frame) => {
              const { header, body } = frame;
              try {
                if (header.type === "spawned") {
                  spawnedYet = true;
                  session.commandStarted();
                  resolve(id);
                } else if (header.type === "stdout") request.onStdout(body);
                else if (header.type === "stderr") request.onStderr(body);
                else if (header.type === "exit") {
                  session.pending.delete(id);
                  void onExit(Number(header.exit_code));
                } else if (header.type === "error") {
                  session.pending.delete(id);
                  reject(this.requestError(frame, null));
                }
              } catch {
                // A listener defect must not throw into the agent's stream.
              }
            },
            fail: (error) => {
              if (!spawnedYet) {
                // The agent died before it said the command started: make sure nothing of it runs, then let the caller
                // use its plain path (the rejection of `started`).
                void onLost(error).then((cause) => (rejectExit(cause), reject(cause)));
                return;
              }
              if (killVerified) return resolveExit({ exitCode: 137, outOfMemoryKilled: false });
              void onLost(error).then(rejectExit);
            },
          },
        );
      } catch (error) {
        reject(error);
      }
    });
    const id = await started;
    let killing: Promise<void> | undefined;
    return {
      pid: `agent-${id}`,
      exit,
      writeStdin: async (data) => session.send({ type: "stdin", target: id }, data),
      closeStdin: async () => session.send({ type: "stdin_close", target: id }),
      kill: () => {
        killing ??= (async () => {
          if (settled) return;
          killRequested = true;
          if (tag && enforcement) {
            // The backend's verified kill of the command's tag (rejects typed when it cannot verify).
            await enforcement.killTagged(tag);
            killVerified = true;
            let timer: NodeJS.Timeout | undefined;
            const reported = await Promise.race([
              exit.then(
                () => true,
                () => true,
              ),
              new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), EXIT_AFTER_KILL_MS))),
            ]);
            clearTimeout(timer);
            if (!reported) {
              // Verified dead, but the agent does not say so: the agent is stuck. Replace it; the exit is known.
              resolveExit({ exitCode: 137, outOfMemoryKilled: false });
              session.end("the sandbox agent did not report a killed command's exit; it was killed");
              await session.kill();
            }
            return;
          }
          try {
            session.request(null, { type: "kill_command", target: id }, { onFrame: () => {}, fail: () => {} });
          } catch {
            return;
          }
          let timer: NodeJS.Timeout | undefined;
          const confirmed = await Promise.race([
            exit.then(
              () => true,
              () => true,
            ),
            new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), 5_000))),
          ]);
          clearTimeout(timer);
          if (!confirmed) {
            session.end("the sandbox agent did not confirm a command's kill; it was killed");
            await session.kill();
          }
        })();
        return killing;
      },
    };
  }

  private requestError(frame: AgentFrame, contextId: string | null): Error {
    const { header } = frame;
    const message = typeof header.message === "string" ? header.message.slice(0, 2000) : "no message";
    if (header.code === "context-lost") return new CodeInterpreterLostError({ backend: this.options.backend, contextId, reason: message });
    if (header.code === "unknown-context")
      return new InvalidArgumentError({
        backend: this.options.backend,
        field: "options.contextId",
        message: `Invalid options.contextId: ${message}.`,
      });
    return new ProviderError({
      backend: this.options.backend,
      message: `The sbx sandbox agent refused the request (${String(header.code)}): ${message}`,
    });
  }

  /** Stops the agent (its interpreters end with it). Idempotent; later calls fail. */
  async stop(): Promise<void> {
    this.stopped = true;
    const session = this.session ?? (await this.starting?.catch(() => undefined));
    if (!session || session.ended) return;
    session.send({ type: "shutdown", id: 0 });
    session.end("the sandbox was closed");
    // Not awaited: the agent exits on shutdown by itself, and the backend's destroy ends whatever is left.
    void session.kill();
  }
}

function toResult(header: Record<string, unknown>): ExecutionResult {
  const data: Record<string, string> = {};
  if (header.data && typeof header.data === "object") {
    for (const [mime, value] of Object.entries(header.data as Record<string, unknown>)) if (typeof value === "string") data[mime] = value;
  }
  return { isMainResult: header.main === true, data };
}

function toExecutionError(value: unknown): ExecutionError | null {
  if (!value || typeof value !== "object") return null;
  const error = value as Record<string, unknown>;
  return { name: String(error.name ?? "Error"), value: String(error.value ?? ""), traceback: String(error.traceback ?? "") };
}
