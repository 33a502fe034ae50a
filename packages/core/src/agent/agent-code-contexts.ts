import { AbortedError, CodeInterpreterLostError, InvalidArgumentError } from "../errors/index.js";
import { withinTime } from "../limits/deadline.js";
import { agentRequestError } from "./agent-request-error.js";
import type { AgentSession } from "./agent-session.js";

/** How many lost or closed context ids are remembered, so that their later runs say why (oldest forgotten first). */
const LOST_CONTEXTS_REMEMBERED = 1024;

/** What creating a context needs. */
export interface CreateContextRequest {
  /** The context's language (`"python"`). */
  readonly language: string;
  /** The interpreter's working directory. */
  readonly cwd: string;
  /** Aborts the wait; a context created after it is closed at once. */
  readonly signal?: AbortSignal;
}

/**
 * The code contexts of one agent client: which session owns each live context, and why each lost one was lost, so a
 * run on a context is sent to its own interpreter or fails typed (`CodeInterpreterLostError` for a lost one,
 * `InvalidArgumentError` for an id the client never created).
 */
export class AgentCodeContexts {
  private readonly owners = new Map<string, AgentSession>();
  private readonly lost = new Map<string, string>();

  constructor(
    private readonly backend: string,
    private readonly answerWithinMs: number,
  ) {}

  /**
   * Creates a persistent interpreter in `session`; returns its id. Bounded: an agent that does not answer within
   * `answerWithinMs` (stopped, hung) is killed and the call fails with `CodeInterpreterLostError`.
   */
  async create(session: AgentSession, request: CreateContextRequest): Promise<string> {
    let abandoned = false;
    let onAbort: (() => void) | undefined;
    const created = new Promise<string>((resolve, reject) => {
      const id = session.request(
        null,
        { type: "create_context", language: request.language, cwd: request.cwd },
        {
          onFrame: (frame) => {
            session.settle(id);
            if (frame.header.type !== "context_created" || typeof frame.header.context !== "string")
              return reject(agentRequestError(frame, null, this.backend));
            // Created after the caller gave up: end it rather than leave an interpreter nobody can reach.
            if (abandoned) session.send({ type: "close_context", id: 0, context: frame.header.context });
            resolve(frame.header.context);
          },
          fail: reject,
        },
      );
      onAbort = () => {
        abandoned = true;
        reject(new AbortedError({ backend: this.backend, cause: request.signal?.reason }));
      };
      request.signal?.addEventListener("abort", onAbort, { once: true });
    });
    try {
      const contextId = await withinTime(created, this.answerWithinMs, () => {
        const reason = `the sandbox agent did not answer create_context within ${this.answerWithinMs} ms; it was killed`;
        void session.abandon(reason);
        return session.lostError(null, reason);
      });
      this.owners.set(contextId, session);
      return contextId;
    } finally {
      if (onAbort) request.signal?.removeEventListener("abort", onAbort);
    }
  }

  /** The session running `contextId`; throws typed when the context is lost or unknown. */
  sessionOf(contextId: string): AgentSession {
    const owner = this.owners.get(contextId);
    if (owner && !owner.ended) return owner;
    const reason = this.lost.get(contextId) ?? owner?.ended;
    if (reason) throw new CodeInterpreterLostError({ backend: this.backend, contextId, reason });
    throw new InvalidArgumentError({
      backend: this.backend,
      field: "options.contextId",
      message: `Invalid options.contextId: no code context ${JSON.stringify(contextId)} in this sandbox. Create one with createCodeContext().`,
    });
  }

  /** Ends a context's interpreter (its later runs raise `CodeInterpreterLostError`); resolves once the agent answered. */
  async close(contextId: string): Promise<void> {
    const session = this.owners.get(contextId);
    if (!session || session.ended) return;
    this.markLost(contextId, "the context was closed");
    await new Promise<void>((resolve) => {
      const id = session.request(
        null,
        { type: "close_context", context: contextId },
        { onFrame: () => (session.settle(id), resolve()), fail: () => resolve() },
      );
    });
  }

  /** The context's interpreter is gone for `reason`: its later runs fail with it. */
  markLost(contextId: string, reason: string): void {
    this.owners.delete(contextId);
    this.lost.set(contextId, reason);
    while (this.lost.size > LOST_CONTEXTS_REMEMBERED) this.lost.delete(this.lost.keys().next().value!);
  }

  /** `session` ended for `reason`: every context it ran is lost. */
  sessionEnded(session: AgentSession, reason: string): void {
    for (const [contextId, owner] of this.owners) if (owner === session) this.markLost(contextId, reason);
  }
}
