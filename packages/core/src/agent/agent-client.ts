import { AbortedError, ProviderError } from "../errors/index.js";
import type {
  CodeRequest,
  DriverExecution,
  DriverFileWatch,
  DriverPortConnection,
  DriverTerminal,
  PortConnectionRequest,
  SandboxDriverV1,
  SpawnedProcess,
  SpawnRequest,
  TerminalRequest,
  WatchFilesRequest,
} from "../v1/provider.js";
import { agentClientSettings, type AgentClientSettings, type AgentRunOptions, type SandboxAgentClientOptions } from "./agent-client-options.js";
import { AgentCodeContexts } from "./agent-code-contexts.js";
import { runInAgent } from "./agent-code-runs.js";
import { spawnThroughAgent } from "./agent-commands.js";
import { watchThroughAgent } from "./agent-file-watch.js";
import { connectThroughAgent } from "./agent-port-connection.js";
import type { AgentSession } from "./agent-session.js";
import { startAgentSession } from "./agent-session-start.js";

export type { AgentCommandEnforcement, AgentRunOptions, SandboxAgentClientOptions } from "./agent-client-options.js";

/**
 * Host side of the sbx sandbox agent: starts it lazily through the driver's `spawn` (one long-lived process), and
 * runs code in it, one-shot or in persistent contexts, and commands while it runs. Everything from the agent is bounded
 * (frame size, output per run, results) and never throws into the backend's callbacks. When the agent dies, in-flight
 * calls fail with `CodeInterpreterLostError`, its contexts are reported lost, and the next call starts a new agent.
 * The jobs live beside it: the session and its transport (`agent-session.ts`, `agent-session-start.ts`,
 * `agent-heartbeat.ts`), code contexts (`agent-code-contexts.ts`), code runs (`agent-code-runs.ts`) and commands
 * (`agent-commands.ts`).
 */
export class SandboxAgentClient {
  private session: AgentSession | undefined;
  private starting: Promise<AgentSession> | undefined;
  private readonly settings: AgentClientSettings;
  private readonly contexts: AgentCodeContexts;
  private stopped = false;
  private startedForCommands = false;
  private heartbeatHeld = false;

  constructor(
    private readonly driver: Pick<SandboxDriverV1, "spawn" | "workspace">,
    options: SandboxAgentClientOptions,
  ) {
    this.settings = agentClientSettings(options);
    this.contexts = new AgentCodeContexts(this.settings.backend, this.settings.startTimeoutMs);
  }

  /** The running agent's `hello` (protocol, agent and Python versions, pid), or undefined before the first call. */
  get hello(): Readonly<Record<string, unknown>> | undefined {
    return this.session && !this.session.ended ? this.session.hello : undefined;
  }

  /**
   * Holds the heartbeat while the sandbox is paused (`sandbox.pause()`, ADR 0055): the stopped agent cannot answer
   * pings, and must not be killed as hung for it. Released at resume, with a fresh wait for the next answer.
   */
  holdHeartbeat(held: boolean): void {
    this.heartbeatHeld = held;
    this.session?.heartbeat.hold(held);
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
    const enforcement = this.settings.enforcement;
    // A backend that kills by process id (ADR 0051) needs no audit tag, so any running agent qualifies.
    return !enforcement || enforcement.commandProcesses !== undefined || this.session!.hello?.command_tags === true;
  }

  /** The running session, or a new one (one start at a time; a failed start is not cached). */
  private async current(): Promise<AgentSession> {
    if (this.stopped) throw new ProviderError({ backend: this.settings.backend, message: "The sandbox agent was stopped with its sandbox." });
    if (this.session && !this.session.ended) return this.session;
    this.starting ??= startAgentSession(this.driver, this.settings, (session, reason) => this.onSessionEnd(session, reason)).then(
      (session) => {
        this.starting = undefined;
        if (session.ended) throw session.lostError(null, session.ended);
        this.session = session;
        if (this.heartbeatHeld) session.heartbeat.hold(true);
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
    this.contexts.sessionEnded(session, reason);
    if (this.session === session) this.session = undefined;
  }

  /** Creates a persistent Python interpreter (a separate process in the sandbox); returns its id. */
  async createContext(request: { language: string; cwd: string; signal?: AbortSignal }): Promise<{ id: string; language: string }> {
    if (request.signal?.aborted) throw new AbortedError({ backend: this.settings.backend, cause: request.signal.reason });
    const session = await this.current();
    const id = await this.contexts.create(session, request);
    return { id, language: request.language };
  }

  /** Ends a context's interpreter (its later runs raise `CodeInterpreterLostError`). */
  async closeContext(contextId: string): Promise<void> {
    await this.contexts.close(contextId);
  }

  /**
   * Runs code, streaming output to the request's callbacks; resolves with the error and the rich results (within
   * `request.resultCaps`). `extra.outputLimitBytes` replaces the request's output limit for this run.
   */
  async run(request: CodeRequest, extra: AgentRunOptions = {}): Promise<DriverExecution> {
    const session = request.contextId !== undefined ? this.contexts.sessionOf(request.contextId) : await this.current();
    if (request.signal.aborted) return { error: null, results: null };
    const outputLimitBytes = extra.outputLimitBytes ?? request.outputLimitBytes;
    return runInAgent(session, outputLimitBytes === request.outputLimitBytes ? request : { ...request, outputLimitBytes }, {
      backend: this.settings.backend,
      interruptGraceMs: this.settings.interruptGraceMs,
      outputLimitBytes: this.settings.outputLimitBytes,
      onContextLost: (contextId, reason) => this.contexts.markLost(contextId, reason),
    });
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
   * Starts a shell command through the running agent (see `spawnThroughAgent`). Fails (so the caller can use its
   * plain path) when no suitable agent is running or the agent refuses before the command started.
   */
  async spawnCommand(request: SpawnRequest): Promise<SpawnedProcess> {
    const session = this.session;
    if (!session || session.ended || !this.commandsReady)
      throw new ProviderError({ backend: this.settings.backend, message: "No sandbox agent that can run commands is running." });
    return spawnThroughAgent(session, request, { backend: this.settings.backend, enforcement: this.settings.enforcement });
  }

  /** Watches a directory with inotify inside the sandbox (starting the agent if it is not running); see `watchThroughAgent`. */
  async watchFiles(request: WatchFilesRequest): Promise<DriverFileWatch> {
    if (request.signal.aborted) throw new AbortedError({ backend: this.settings.backend, cause: request.signal.reason });
    const session = await this.current();
    return watchThroughAgent(session, this.driver.workspace, request, this.settings.backend);
  }

  /**
   * Starts a process on a pseudo-terminal through the agent (starting it if it is not running), held to the backend's
   * enforcement like a command (audit tag, verified kill, exit rule). Refused without enforcement: a terminal's kill
   * must be verified by the backend.
   */
  async openTerminal(request: TerminalRequest): Promise<DriverTerminal> {
    const { backend, enforcement } = this.settings;
    if (!enforcement)
      throw new ProviderError({ backend, message: "Terminals through the sbx sandbox agent need the backend's enforcement (a verified kill)." });
    const session = await this.current();
    if (!this.commandsReady)
      throw new ProviderError({
        backend,
        message: "The sbx sandbox agent cannot tag a terminal's processes here (its audit tag is set), so their kill could not be verified.",
      });
    return spawnThroughAgent(
      session,
      { command: request.command, cwd: request.cwd, env: request.env, stdin: true, onStdout: request.onData, onStderr: request.onData },
      { backend, enforcement, terminal: { cols: request.cols, rows: request.rows } },
    );
  }

  /** Opens a connection to a port on the sandbox's loopback (starting the agent if it is not running); see `connectThroughAgent`. */
  async openPortConnection(request: PortConnectionRequest): Promise<DriverPortConnection> {
    if (request.signal.aborted) throw new AbortedError({ backend: this.settings.backend, cause: request.signal.reason });
    const session = await this.current();
    return connectThroughAgent(session, request, this.settings.backend);
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
