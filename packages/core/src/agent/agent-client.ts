import { defaultEnvironment } from "../runtime/default-environment.js";
import { AbortedError, CodeInterpreterLostError, InvalidArgumentError, ProviderError, RuntimeMissingError, SbxError } from "../errors/index.js";
import type { CodeRequest, DriverExecution, SandboxDriverV1, SpawnedProcess, SpawnRequest } from "../v1/provider.js";
import type { ExecutionError, ExecutionResult } from "../v1/sandbox.js";
import { AgentFrameDecoder, AgentProtocolViolation, encodeAgentFrame, type AgentFrame } from "./agent-frames.js";
import { agentCommandLine, SBX_AGENT_PROTOCOL } from "./agent-source.js";

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
}

/** A run's extras beyond `CodeRequest`: an agent-side deadline and an output limit. */
export interface AgentRunOptions {
  /** The agent interrupts the run after this many ms (then kills the interpreter after the grace). */
  readonly deadlineMs?: number;
  /** Output bytes per stream forwarded for this run. */
  readonly outputLimitBytes?: number;
}

const MAX_RESULTS_PER_RUN = 1000;
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

  constructor(readonly process: SpawnedProcess | undefined, private readonly backend: string, private readonly onEnd: (session: AgentSession, reason: string) => void) {}

  static async start(driver: Pick<SandboxDriverV1, "spawn" | "workspace">, options: Required<SandboxAgentClientOptions>, onEnd: (session: AgentSession, reason: string) => void): Promise<AgentSession> {
    let session: AgentSession | undefined;
    const early: Uint8Array[] = [];
    const earlyErr: Uint8Array[] = [];
    const process = await driver.spawn({
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
      ({ exitCode }) => session!.end(`the sandbox agent exited (exit code ${exitCode})${session!.stderrTail ? `: ${session!.stderrTail.trim().slice(-500)}` : ""}`, exitCode),
      (error: unknown) => session!.end(`the sandbox agent's process failed: ${error instanceof Error ? error.message : String(error)}`),
    );
    let timer: NodeJS.Timeout | undefined;
    try {
      const greeting = await Promise.race([
        hello,
        new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`no hello within ${options.startTimeoutMs} ms`)), options.startTimeoutMs))),
      ]);
      if (greeting.protocol !== SBX_AGENT_PROTOCOL) throw new Error(`the agent speaks protocol ${String(greeting.protocol)}, this @sbx/core speaks ${SBX_AGENT_PROTOCOL}`);
      session.hello = greeting;
      return session;
    } catch (error) {
      const exit = session.exitCode;
      await session.kill();
      if (exit === 127 || /python3 not found/.test(session.stderrTail)) throw new RuntimeMissingError({ backend: options.backend, runtime: "python3", detail: "the sbx sandbox agent runs with the image's python3" });
      if (exit === 3 || /python3 >= 3\.8 is required/.test(session.stderrTail)) throw new RuntimeMissingError({ backend: options.backend, runtime: "python3 >= 3.8", detail: session.stderrTail.trim().slice(-200) });
      if (SbxError.isInstance(error)) throw error;
      throw new ProviderError({ backend: options.backend, retryable: true, cause: error, message: `The sbx sandbox agent did not start: ${error instanceof Error ? error.message : String(error)}${session.stderrTail ? ` (stderr: ${session.stderrTail.trim().slice(-300)})` : ""}` });
    } finally {
      clearTimeout(timer);
    }
  }

  exitCode: number | undefined;

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
  private readonly options: Required<SandboxAgentClientOptions>;
  private stopped = false;

  constructor(private readonly driver: Pick<SandboxDriverV1, "spawn" | "workspace">, options: SandboxAgentClientOptions) {
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
        const id = session.request(null, { type: "create_context", language: request.language, cwd: request.cwd }, {
          onFrame: (frame) => {
            session.pending.delete(id);
            if (frame.header.type === "context_created" && typeof frame.header.context === "string") {
              // Created after the caller gave up: end it rather than leave an interpreter nobody can reach.
              if (abandoned) session.send({ type: "close_context", id: 0, context: frame.header.context });
              resolve(frame.header.context);
            } else reject(this.requestError(frame, null));
          },
          fail: reject,
        });
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
      const id = session.request(null, { type: "close_context", context: contextId }, { onFrame: () => (session.pending.delete(id), resolve()), fail: () => resolve() });
    });
  }

  /** Runs code, streaming output to the request's callbacks; resolves with the error and the rich results. */
  async run(request: CodeRequest, extra: AgentRunOptions = {}): Promise<DriverExecution> {
    const contextId = request.contextId ?? null;
    let session: AgentSession;
    if (contextId !== null) {
      const owner = this.owners.get(contextId);
      if (!owner || owner.ended) {
        const reason = this.lost.get(contextId) ?? (owner?.ended);
        if (reason) throw new CodeInterpreterLostError({ backend: this.options.backend, contextId, reason });
        throw new InvalidArgumentError({ backend: this.options.backend, field: "options.contextId", message: `Invalid options.contextId: no code context ${JSON.stringify(contextId)} in this sandbox. Create one with createCodeContext().` });
      }
      session = owner;
    } else {
      session = await this.current();
    }
    if (request.signal.aborted) return { error: null, results: null };
    const results: ExecutionResult[] = [];
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
        id = session.request(contextId, {
          type: "run",
          context: contextId,
          code: request.code,
          env: request.env,
          cwd: request.cwd,
          deadline_ms: extra.deadlineMs ?? null,
          grace_ms: grace,
          output_limit_bytes: Math.min(extra.outputLimitBytes ?? Number.POSITIVE_INFINITY, this.options.outputLimitBytes),
        }, {
          onFrame: (frame) => {
            const { header, body } = frame;
            if (header.type === "stdout" || header.type === "stderr") {
              const text = (header.type === "stdout" ? stdoutDecoder : stderrDecoder).decode(body, { stream: true });
              if (text) (header.type === "stdout" ? request.onStdout : request.onStderr)(text);
            } else if (header.type === "result") {
              if (results.length < MAX_RESULTS_PER_RUN) results.push(toResult(header));
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
                if (header.oom === true) {
                  const dropped = (header.dropped ?? {}) as { stdout?: unknown; stderr?: unknown };
                  return resolve({ error: null, results, outOfMemoryKilled: true, droppedBytes: { stdout: Number(dropped.stdout) || 0, stderr: Number(dropped.stderr) || 0 } });
                }
                return reject(new CodeInterpreterLostError({ backend: this.options.backend, contextId, reason: header.lost }));
              }
              const dropped = (header.dropped ?? {}) as { stdout?: unknown; stderr?: unknown };
              resolve({ error: toExecutionError(header.error), results, outOfMemoryKilled: typeof header.oom === "boolean" ? header.oom : null, droppedBytes: { stdout: Number(dropped.stdout) || 0, stderr: Number(dropped.stderr) || 0 } });
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
        });
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
   * Starts a shell command through the running agent (its own session, raw output streamed, stdin, process-group
   * kill). Fails (so the caller can use its plain path) when no agent is running. `kill()` resolves only once the
   * agent has seen the command exit; if it has not within 5 s, the whole agent is killed through the driver.
   */
  async spawnCommand(request: SpawnRequest): Promise<SpawnedProcess> {
    const session = this.session;
    if (!session || session.ended) throw new ProviderError({ backend: this.options.backend, message: "No sandbox agent is running." });
    let resolveExit!: (value: { exitCode: number }) => void;
    let rejectExit!: (error: Error) => void;
    const exit = new Promise<{ exitCode: number }>((resolve, reject) => {
      resolveExit = resolve;
      rejectExit = reject;
    });
    exit.catch(() => {});
    let exited = false;
    const started = new Promise<number>((resolve, reject) => {
      const id = session.request(null, { type: "spawn", command: request.command, cwd: request.cwd, env: request.env, stdin: request.stdin }, {
        onFrame: (frame) => {
          const { header, body } = frame;
          try {
            if (header.type === "spawned") resolve(id);
            else if (header.type === "stdout") request.onStdout(body);
            else if (header.type === "stderr") request.onStderr(body);
            else if (header.type === "exit") {
              session.pending.delete(id);
              exited = true;
              resolveExit({ exitCode: Number(header.exit_code) });
            } else if (header.type === "error") {
              session.pending.delete(id);
              reject(this.requestError(frame, null));
            }
          } catch {
            // A listener defect must not throw into the agent's stream.
          }
        },
        fail: (error) => {
          reject(error);
          rejectExit(new ProviderError({ backend: this.options.backend, retryable: true, cause: error, message: `The sbx sandbox agent running the command was lost: ${error.message}` }));
        },
      });
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
          if (exited) return;
          try {
            session.request(null, { type: "kill_command", target: id }, { onFrame: () => {}, fail: () => {} });
          } catch {
            return;
          }
          let timer: NodeJS.Timeout | undefined;
          const confirmed = await Promise.race([exit.then(() => true, () => true), new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), 5_000)))]);
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
    if (header.code === "unknown-context") return new InvalidArgumentError({ backend: this.options.backend, field: "options.contextId", message: `Invalid options.contextId: ${message}.` });
    return new ProviderError({ backend: this.options.backend, message: `The sbx sandbox agent refused the request (${String(header.code)}): ${message}` });
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
