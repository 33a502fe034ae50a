import { CodeInterpreterLostError } from "../errors/index.js";
import type { SpawnedProcess } from "../v1/provider.js";
import { AgentFrameDecoder, encodeAgentFrame, type AgentFrame } from "./agent-frames.js";
import { AgentHeartbeat } from "./agent-heartbeat.js";

/** Bytes of the agent's stderr kept for error messages (its last words). */
const STDERR_TAIL_BYTES = 4096;

/** Who gets the frames answering one request. */
export interface AgentListener {
  /** Every frame carrying the request's id, until the listener removes itself (`AgentSession.settle`). */
  onFrame(frame: AgentFrame): void;
  /** The session ended before the request's terminal answer: the error says why. */
  fail(error: Error): void;
}

/** A pending request: its listener and the code context it concerns (for the lost error). */
interface PendingRequest extends AgentListener {
  readonly contextId: string | null;
}

/**
 * One running agent process and its transport: frames in and out, one listener per pending request, the agent's
 * stderr tail, the heartbeat while commands run. When the session ends (the agent exited, broke the protocol, stopped
 * answering, or was stopped), every pending request fails with `CodeInterpreterLostError` and `onEnd` runs once.
 * Everything from the agent is bounded and never throws into the backend's stream callbacks.
 */
export class AgentSession {
  /** Why the session ended, once it has. */
  ended: string | undefined;
  /** The agent's `hello`, once it said it. */
  hello: Record<string, unknown> | undefined;
  /** The agent process's exit code, once it exited. */
  exitCode: number | undefined;
  /** Pings the agent while commands run through it (see `AgentHeartbeat`). */
  readonly heartbeat: AgentHeartbeat;
  private readonly pending = new Map<number, PendingRequest>();
  private nextId = 1;
  private stderrText = "";
  private readonly decoder = new AgentFrameDecoder();

  constructor(
    private readonly process: SpawnedProcess | undefined,
    private readonly backend: string,
    private readonly onEnd: (session: AgentSession, reason: string) => void,
  ) {
    this.heartbeat = new AgentHeartbeat(this);
  }

  /** The last bytes the agent wrote to its stderr, trimmed. */
  get stderrTail(): string {
    return this.stderrText.trim();
  }

  /** Accepts a chunk of the agent's stderr (free text, kept for error messages only). */
  receiveStderr(chunk: Uint8Array): void {
    this.stderrText = (this.stderrText + Buffer.from(chunk).toString("utf8")).slice(-STDERR_TAIL_BYTES);
  }

  /** Accepts a chunk of the agent's stdout: frames, each handed to the listener of its id. */
  receive(chunk: Uint8Array): void {
    if (this.ended) return;
    let frames: AgentFrame[];
    try {
      frames = this.decoder.push(chunk);
    } catch (error) {
      void this.abandon(`the sandbox agent broke the protocol (${error instanceof Error ? error.message : String(error)}); it was killed`);
      return;
    }
    if (frames.length > 0) this.heartbeat.heard();
    for (const frame of frames) {
      try {
        this.dispatch(frame);
      } catch {
        // A listener defect must not throw into the backend's stream callback.
      }
    }
  }

  /**
   * Frames without a numeric id (`context_lost`, unknown types) are ignored (forward compatible): a context's loss
   * reaches the host through its run's `done` or the agent's `context-lost` error.
   */
  private dispatch(frame: AgentFrame): void {
    const id = frame.header.id;
    if (typeof id !== "number") return;
    this.pending.get(id)?.onFrame(frame);
  }

  /** Sends a request; `listener` gets every frame with its id until `settle(id)`. Throws the lost error once the session ended. */
  request(contextId: string | null, header: Record<string, unknown>, listener: AgentListener): number {
    if (this.ended) throw this.lostError(contextId, this.ended);
    const id = this.nextId++;
    this.pending.set(id, { contextId, ...listener });
    this.send({ ...header, id });
    return id;
  }

  /** Registers the listener of the agent's `hello` (id 0), before any frame is read. */
  expectHello(listener: AgentListener): void {
    this.pending.set(0, { contextId: null, ...listener });
  }

  /** Sends a request whose answer nobody waits for (`cancel`, `kill_command`, `ping`); false when the session ended. */
  notify(header: Record<string, unknown>, onAnswer: () => void = () => {}): boolean {
    if (this.ended) return false;
    const id = this.request(null, header, { onFrame: () => (this.settle(id), onAnswer()), fail: () => {} });
    return true;
  }

  /** The request `id` got its terminal answer: its listener gets no more frames. */
  settle(id: number): void {
    this.pending.delete(id);
  }

  /** Writes one frame to the agent; a failed write ends the session. Nothing is sent once it ended. */
  send(header: Record<string, unknown>, body?: Uint8Array): void {
    if (this.ended || !this.process) return;
    this.process.writeStdin(encodeAgentFrame(header, body)).catch((error: unknown) => {
      void this.abandon(`writing to the sandbox agent failed: ${error instanceof Error ? error.message : String(error)}`);
    });
  }

  /** The error of a call on a context (or none) once the session ended for `reason`. */
  lostError(contextId: string | null, reason: string): CodeInterpreterLostError {
    return new CodeInterpreterLostError({ backend: this.backend, contextId, reason });
  }

  /** Ends the session for `reason` (first reason wins): pending requests fail, `onEnd` runs. The process is left alone. */
  end(reason: string, exitCode?: number): void {
    if (exitCode !== undefined) this.exitCode = exitCode;
    if (this.ended) return;
    this.ended = reason;
    this.heartbeat.stop();
    const pending = [...this.pending.values()];
    this.pending.clear();
    for (const request of pending) request.fail(this.lostError(request.contextId, reason));
    this.onEnd(this, reason);
  }

  /** Ends the session for `reason` and kills the agent through the driver (the agent misbehaved or stopped answering). */
  async abandon(reason: string): Promise<void> {
    this.end(reason);
    await this.kill();
  }

  /** Kills the agent process through the driver (which ends everything it started); never rejects. */
  async kill(): Promise<void> {
    if (!this.process) return;
    await this.process.kill().catch(() => {});
  }
}
