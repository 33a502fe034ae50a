/**
 * The code interpreter's HTTP API (port 49999): `/execute`, `/contexts`.
 * Each context is a persistent `python3` driver process (a docker exec with
 * stdin attached) inside the sandbox, so state persists within a context and
 * is isolated between contexts.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { randomUUID } from "node:crypto";
import { readBody } from "./connect-protocol.js";
import { startExec, type RunningExec } from "@sbx/emulator-kit";
import { DEFAULT_USER, homeDirectoryOf, type ContainerSandbox } from "./container-sandbox.js";
import { signalSession } from "./envd-process.js";
import { codeInterpreterDriverSource } from "./code-interpreter-driver.js";
import { LineSplitter } from "./line-splitter.js";

export { codeInterpreterDriverSource };

/** Where the driver script lives inside the container. */
export const codeInterpreterDriverPath = "/opt/e2b-emulator/code_interpreter_driver.py";

/** A code interpreter message (one NDJSON line). */
type InterpreterMessage = { type: string; [field: string]: unknown };

/**
 * Internal marker: the execution's stream ends here without `end_of_execution`, as the real server's does
 * when its kernel websocket closes under a running cell (restart or removal of the context).
 */
const STREAM_ENDS = "emulator_stream_ends";

/** Error with an HTTP status, turned into a plain-text response. */
class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

/** One persistent Python process. */
class CodeContext {
  readonly id = randomUUID();
  private running: RunningExec | undefined;
  private driverPid = 0;
  private readonly lines = new LineSplitter();
  private listener: ((message: InterpreterMessage) => void) | undefined;
  private queue: Promise<void> = Promise.resolve();
  private startup: Promise<void> | undefined;
  private activeExecution: { cancelled: boolean } | undefined;

  constructor(
    readonly sandbox: ContainerSandbox,
    readonly language: string,
    readonly cwd: string,
  ) {}

  /** Starts the driver if needed; resolves when it reported ready. */
  ensureStarted(): Promise<void> {
    if (!this.startup) this.startup = this.startDriver();
    return this.startup;
  }

  private async startDriver(): Promise<void> {
    let resolveReady!: () => void;
    let rejectReady!: (error: Error) => void;
    const ready = new Promise<void>((resolve, reject) => {
      resolveReady = resolve;
      rejectReady = reject;
    });
    this.lines.reset();
    const stderrBeforeReady: string[] = [];
    let isReady = false;
    const running = await startExec(
      this.sandbox.container,
      {
        command: ["python3", "-u", codeInterpreterDriverPath],
        user: DEFAULT_USER,
        workingDirectory: this.cwd,
        environment: { HOME: homeDirectoryOf(DEFAULT_USER), USER: DEFAULT_USER, ...this.sandbox.environment },
        attachStdin: true,
      },
      {
        onStdout: (chunk) => {
          for (const line of this.lines.push(chunk)) {
            if (!line.trim()) continue;
            let message: InterpreterMessage;
            try {
              message = JSON.parse(line) as InterpreterMessage;
            } catch {
              message = { type: "stderr", text: line + "\n", timestamp: new Date().toISOString() };
            }
            if (message.type === "ready") {
              this.driverPid = Number(message.pid);
              isReady = true;
              resolveReady();
            } else this.listener?.(message);
          }
        },
        onStderr: (chunk) => {
          // Raw fd-level output (e.g. from subprocesses) of the current execution.
          const text = chunk.toString("utf8");
          if (!isReady) stderrBeforeReady.push(text);
          else this.listener?.({ type: "stderr", text, timestamp: new Date().toISOString() });
        },
      },
    );
    this.running = running;
    void running.exitCode.then(() => {
      if (this.running !== running) return;
      this.running = undefined;
      this.startup = undefined;
      if (!isReady) rejectReady(new Error(`python driver failed to start: ${stderrBeforeReady.join("")}`));
      // The kernel died mid-execution (os._exit, OOM kill): Jupyter restarts it (state lost) and the real
      // server reports the "restarting" status to the running execution as ContextRestarting, then ends it.
      // The next execution starts a fresh driver.
      this.listener?.({ type: "error", name: "ContextRestarting", value: "Context was restarted", traceback: "" });
      this.listener?.({ type: "end_of_execution" });
    });
    await ready;
  }

  /**
   * Runs code; messages are passed to `onMessage` until end_of_execution. Executions are
   * serialized. `cancellation.cancelled` (set when the client went away) skips a queued
   * execution; for the running one call {@link interrupt}.
   */
  execute(
    code: string,
    environment: Record<string, string> | undefined,
    onMessage: (message: InterpreterMessage) => void,
    cancellation: { cancelled: boolean } = { cancelled: false },
  ): Promise<void> {
    const run = async () => {
      if (cancellation.cancelled) return;
      await this.ensureStarted();
      this.activeExecution = cancellation;
      await new Promise<void>((resolve) => {
        this.listener = (message) => {
          if (message.type !== STREAM_ENDS) onMessage(message);
          if (message.type === "end_of_execution" || message.type === STREAM_ENDS) {
            this.listener = undefined;
            resolve();
          }
        };
        this.running?.connection.write(JSON.stringify({ code, env_vars: environment ?? {} }) + "\n");
      });
    };
    const result = this.queue.then(run, run).finally(() => {
      if (this.activeExecution === cancellation) this.activeExecution = undefined;
    });
    this.queue = result.catch(() => undefined);
    return result;
  }

  /** Sends SIGINT (KeyboardInterrupt, like Jupyter's interrupt) if `execution` is the one running. */
  async interrupt(execution: { cancelled: boolean }): Promise<void> {
    execution.cancelled = true;
    if (this.activeExecution !== execution || !this.driverPid || this.sandbox.gone) return;
    await signalSession(this.sandbox, this.driverPid, 2).catch(() => undefined);
  }

  /** Kills the driver process (and anything it spawned). */
  async stop(): Promise<void> {
    const running = this.running;
    const pid = this.driverPid;
    this.running = undefined;
    this.startup = undefined;
    if (!running) return;
    if (pid && !this.sandbox.gone) await signalSession(this.sandbox, pid, 9).catch(() => undefined);
    running.detach();
    if (this.listener) {
      // What the real server sends a running execution when the context's kernel websocket closes
      // (restart or removal): a WebSocketError, then UnexpectedEndOfExecution, and the stream ends.
      this.listener({ type: "error", name: "WebSocketError", value: "The connections was lost, rerun the code to get the results", traceback: "" });
      this.listener({
        type: "error",
        name: "UnexpectedEndOfExecution",
        value: "Connection to the execution was closed before the execution was finished",
        traceback: "",
      });
      this.listener({ type: STREAM_ENDS });
    }
  }

  /** Context JSON as the code interpreter returns it. */
  toJSON(): { id: string; language: string; cwd: string } {
    return { id: this.id, language: this.language, cwd: this.cwd };
  }
}

/** The code contexts of one sandbox. */
export class CodeContextRegistry {
  private readonly contexts = new Map<string, CodeContext>();
  private defaultContext: CodeContext | undefined;

  constructor(readonly sandbox: ContainerSandbox) {}

  create(language: string | undefined, cwd: string | undefined): CodeContext {
    const context = new CodeContext(this.sandbox, checkLanguage(language), cwd || homeDirectoryOf(DEFAULT_USER));
    this.contexts.set(context.id, context);
    return context;
  }

  get(id: string): CodeContext {
    const context = this.contexts.get(id);
    if (!context) throw new HttpError(404, `context ${id} not found`);
    return context;
  }

  /** The context used when /execute gets no context_id. */
  getDefault(): CodeContext {
    if (!this.defaultContext) {
      this.defaultContext = this.create("python", undefined);
    }
    return this.defaultContext;
  }

  async remove(id: string): Promise<void> {
    const context = this.get(id);
    this.contexts.delete(id);
    if (this.defaultContext === context) this.defaultContext = undefined;
    await context.stop();
  }

  list(): CodeContext[] {
    return [...this.contexts.values()];
  }

  /** Called when the sandbox dies. */
  closeAll(): void {
    for (const context of this.contexts.values()) void context.stop();
    this.contexts.clear();
  }
}

function checkLanguage(language: string | undefined | null): string {
  const normalized = (language ?? "python").toLowerCase();
  if (normalized !== "python" && normalized !== "python3") {
    throw new HttpError(400, `language ${JSON.stringify(language)} is not supported: the E2B emulator's code interpreter only runs python`);
  }
  return "python";
}

async function readJson<T>(request: IncomingMessage): Promise<T> {
  const text = (await readBody(request)).toString("utf8");
  try {
    return (text ? JSON.parse(text) : {}) as T;
  } catch {
    throw new HttpError(400, "request body is not valid JSON");
  }
}

function sendJson(response: ServerResponse, status: number, value: unknown): void {
  const body = JSON.stringify(value);
  response.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(body) });
  response.end(body);
}

/** Handles one request routed to port 49999 of a sandbox. */
export async function handleCodeInterpreterRequest(
  sandbox: ContainerSandbox,
  url: URL,
  request: IncomingMessage,
  response: ServerResponse,
): Promise<void> {
  const registry = sandbox.codeContexts;
  const method = request.method ?? "GET";
  const segments = url.pathname.split("/").filter(Boolean);
  try {
    if (method === "GET" && url.pathname === "/health") {
      response.writeHead(200, { "content-type": "text/plain" });
      response.end("OK");
      return;
    }
    if (method === "POST" && url.pathname === "/execute") {
      const body = await readJson<{ code?: string; context_id?: string; language?: string; env_vars?: Record<string, string> }>(request);
      if (body.context_id && body.language) throw new HttpError(400, "provide context_id or language, not both");
      let context: CodeContext;
      if (body.context_id) context = registry.get(body.context_id);
      else {
        checkLanguage(body.language);
        context = registry.getDefault();
      }
      await context.ensureStarted();
      response.writeHead(200, { "content-type": "application/x-ndjson" });
      // Send headers now: the SDK's request timeout runs until they arrive, its cell timeout after.
      response.flushHeaders();
      const execution = { cancelled: false };
      let finished = false;
      // The SDK aborts the request on its timeout: interrupt the cell like Jupyter would.
      response.on("close", () => {
        if (!finished) void context.interrupt(execution);
      });
      await context.execute(
        body.code ?? "",
        body.env_vars,
        (message) => {
          if (!response.destroyed) response.write(JSON.stringify(message) + "\n");
        },
        execution,
      );
      finished = true;
      response.end();
      return;
    }
    if (segments[0] === "contexts") {
      if (method === "POST" && segments.length === 1) {
        const body = await readJson<{ language?: string; cwd?: string }>(request);
        const context = registry.create(body.language, body.cwd);
        await context.ensureStarted();
        sendJson(response, 200, context.toJSON());
        return;
      }
      if (method === "GET" && segments.length === 1) {
        sendJson(
          response,
          200,
          registry.list().map((context) => context.toJSON()),
        );
        return;
      }
      if (method === "DELETE" && segments.length === 2) {
        await registry.remove(segments[1]!);
        response.writeHead(204);
        response.end();
        return;
      }
      if (method === "POST" && segments.length === 3 && segments[2] === "restart") {
        const context = registry.get(segments[1]!);
        await context.stop();
        await context.ensureStarted();
        response.writeHead(204);
        response.end();
        return;
      }
    }
    throw new HttpError(404, `no code interpreter route ${method} ${url.pathname}`);
  } catch (error) {
    const status = error instanceof HttpError ? error.status : 500;
    const message = error instanceof Error ? error.message : String(error);
    if (response.headersSent) {
      response.end();
      return;
    }
    response.writeHead(status, { "content-type": "text/plain" });
    response.end(message);
  }
}
