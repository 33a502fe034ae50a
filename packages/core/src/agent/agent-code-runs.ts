import { CodeInterpreterLostError } from "../errors/index.js";
import { cancellableDelay } from "../limits/deadline.js";
import { DEFAULT_MAX_RESULTS, ResultCollector } from "../limits/execution-limits.js";
import { DEFAULT_OUTPUT_LIMIT_BYTES } from "../limits/output-collector.js";
import type { CodeRequest, DriverExecution } from "../v1/provider.js";
import type { ExecutionError, ExecutionResult } from "../v1/sandbox.js";
import type { AgentFrame } from "./agent-frames.js";
import { agentRequestError } from "./agent-request-error.js";
import type { AgentSession } from "./agent-session.js";

/** After a cancel, how long past the interrupt grace the agent may take to end the run before it is killed. */
const CANCEL_ANSWER_MS = 5_000;
/** `output_limit_bytes` of a run with no limit (a caller streaming its output sees all of it, as with commands). */
const NO_OUTPUT_LIMIT = Number.MAX_SAFE_INTEGER;

/** How one run is held. */
export interface AgentRunSettings {
  /** Backend name for errors. */
  readonly backend: string;
  /** After an interrupt, how long the cell may take to stop before the agent kills its interpreter, in ms. */
  readonly interruptGraceMs: number;
  /** Output bytes per stream the agent forwards; undefined: no limit. */
  readonly outputLimitBytes: number | undefined;
  /** The run's context lost its interpreter (the agent reported it): its later runs fail with `reason`. */
  readonly onContextLost: (contextId: string, reason: string) => void;
}

/**
 * Runs code in `session` (a one-shot interpreter, or the request's context), streaming output to the request's
 * callbacks as text; resolves with the error, the results (kept within `request.resultCaps`, the rest counted in
 * `droppedResults` with the agent's own drops) and what the agent cut. On the request's abort the agent is told to
 * cancel (interrupt, then kill after the grace) and the run resolves with no results once it ended; an agent that does
 * not answer within the grace plus 5 s is killed through the driver. A lost interpreter rejects with
 * `CodeInterpreterLostError`, except when the out-of-memory killer ended it: that is a result (`outOfMemoryKilled`).
 */
export function runInAgent(session: AgentSession, request: CodeRequest, settings: AgentRunSettings): Promise<DriverExecution> {
  const contextId = request.contextId ?? null;
  const results = new ResultCollector(request.resultCaps ?? { maxResults: DEFAULT_MAX_RESULTS, limitBytes: DEFAULT_OUTPUT_LIMIT_BYTES });
  const stdout = new TextDecoder();
  const stderr = new TextDecoder();
  const flush = () => {
    const restOut = stdout.decode();
    const restErr = stderr.decode();
    if (restOut) request.onStdout(restOut);
    if (restErr) request.onStderr(restErr);
  };
  const dropped = (header: Record<string, unknown>): Pick<DriverExecution, "droppedBytes" | "droppedResults"> => {
    const counts = (header.dropped ?? {}) as { stdout?: unknown; stderr?: unknown; results?: unknown };
    return {
      droppedBytes: { stdout: Number(counts.stdout) || 0, stderr: Number(counts.stderr) || 0 },
      droppedResults: (Number(counts.results) || 0) + results.dropped,
    };
  };
  return new Promise<DriverExecution>((resolve, reject) => {
    let id = 0;
    let watchdog: ReturnType<typeof cancellableDelay> | undefined;
    const cleanup = () => {
      request.signal.removeEventListener("abort", onAbort);
      watchdog?.cancel();
    };
    const onAbort = () => {
      session.notify({ type: "cancel", target: id });
      // If the agent does not answer at all (stopped, hung), the whole agent is killed through the backend, which ends
      // every process it started; the run's listener then fails with the session.
      watchdog = cancellableDelay(settings.interruptGraceMs + CANCEL_ANSWER_MS);
      void watchdog.promise.then(() => session.abandon("the sandbox agent did not answer a cancel; it was killed"));
    };
    const done = (header: Record<string, unknown>) => {
      if (typeof header.lost !== "string") {
        const oom = typeof header.oom === "boolean" ? header.oom : null;
        return resolve({ error: toExecutionError(header.error), results: results.results, outOfMemoryKilled: oom, ...dropped(header) });
      }
      if (contextId !== null) settings.onContextLost(contextId, header.lost);
      if (request.signal.aborted) return resolve({ error: null, results: null });
      // Killed for memory: a result that cannot pass for success (core reports OutOfMemoryError), like a command's exit
      // 137; a context's later calls raise CodeInterpreterLostError.
      if (header.oom === true) return resolve({ error: null, results: results.results, outOfMemoryKilled: true, ...dropped(header) });
      reject(new CodeInterpreterLostError({ backend: settings.backend, contextId, reason: header.lost }));
    };
    const onFrame = ({ header, body }: AgentFrame) => {
      if (header.type === "stdout") {
        const text = stdout.decode(body, { stream: true });
        if (text) request.onStdout(text);
      } else if (header.type === "stderr") {
        const text = stderr.decode(body, { stream: true });
        if (text) request.onStderr(text);
      } else if (header.type === "result") {
        results.push(toResult(header));
      } else if (header.type === "done") {
        session.settle(id);
        cleanup();
        flush();
        done(header);
      } else if (header.type === "error") {
        session.settle(id);
        cleanup();
        if (header.code === "context-lost" && contextId !== null) settings.onContextLost(contextId, String(header.message));
        reject(agentRequestError({ header, body }, contextId, settings.backend));
      }
    };
    const fail = (error: Error) => {
      cleanup();
      flush();
      reject(error);
    };
    try {
      id = session.request(contextId, runHeader(request, contextId, settings), { onFrame, fail });
    } catch (error) {
      reject(error instanceof Error ? error : new Error(String(error)));
      return;
    }
    request.signal.addEventListener("abort", onAbort, { once: true });
    if (request.signal.aborted) onAbort();
  });
}

/** The `run` request (docs/agent-protocol.md); the agent-side `deadline_ms` is not used: core's deadline stops the run. */
function runHeader(request: CodeRequest, contextId: string | null, settings: AgentRunSettings): Record<string, unknown> {
  const limit = Math.min(request.outputLimitBytes ?? NO_OUTPUT_LIMIT, settings.outputLimitBytes ?? NO_OUTPUT_LIMIT);
  return {
    type: "run",
    context: contextId,
    code: request.code,
    env: request.env,
    cwd: request.cwd,
    grace_ms: settings.interruptGraceMs,
    output_limit_bytes: limit,
  };
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
