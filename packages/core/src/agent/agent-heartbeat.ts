/** While commands run through the agent: how often it is pinged. */
const PING_INTERVAL_MS = 2_000;
/** How long the agent may leave a ping unanswered before it is killed. */
const ANSWER_WITHIN_MS = 10_000;

/** What the heartbeat needs of its session. */
export interface HeartbeatSession {
  /** Why the session ended, once it has. */
  readonly ended: string | undefined;
  /** Sends a `ping`; `onAnswer` runs when its `pong` comes. False when the session ended. */
  notify(header: Record<string, unknown>, onAnswer: () => void): boolean;
  /** Ends the session and kills the agent. */
  abandon(reason: string): Promise<void>;
}

/**
 * The agent's heartbeat while commands run through it: pinged every 2 s, an agent that leaves a ping unanswered and
 * sends nothing else for 10 s (stopped from inside, hung) is killed, so its commands fail typed instead of waiting forever for an exit report
 * that cannot come. Code runs need none: their own deadline watches them. The one periodic timer of the agent client.
 */
export class AgentHeartbeat {
  private liveCommands = 0;
  private timer: NodeJS.Timeout | undefined;
  private unansweredSince: number | undefined;
  /** True while the sandbox is paused (ADR 0055): a stopped agent cannot answer, and is not hung. */
  private held = false;

  constructor(private readonly session: HeartbeatSession) {}

  /** A command through the agent started: the heartbeat runs while any does. */
  commandStarted(): void {
    this.liveCommands++;
    if (this.timer || this.session.ended) return;
    this.timer = setInterval(() => this.beat(), PING_INTERVAL_MS);
    this.timer.unref();
  }

  /** A command through the agent ended (see `commandStarted`). */
  commandEnded(): void {
    this.liveCommands = Math.max(0, this.liveCommands - 1);
    if (this.liveCommands === 0) this.stop();
  }

  /**
   * A frame came from the agent: it is running (a stopped or hung agent sends nothing), so the unanswered ping's
   * 10 s start again (ADR 0051). Its answer may be queued behind megabytes of a command's output on a slow stream (a
   * Pod's exec through the API server): without this the agent was killed in the middle of a large transfer.
   */
  heard(): void {
    if (this.unansweredSince !== undefined) this.unansweredSince = Date.now();
  }

  /** Stops the heartbeat (the session ended, or no command runs). */
  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
    this.unansweredSince = undefined;
  }

  /** Holds the heartbeat while the sandbox is paused, and releases it (the wait for an answer starts afresh). */
  hold(held: boolean): void {
    this.held = held;
    this.unansweredSince = undefined;
  }

  private beat(): void {
    if (this.session.ended) return this.stop();
    if (this.held) return;
    if (this.unansweredSince !== undefined) {
      if (Date.now() - this.unansweredSince < ANSWER_WITHIN_MS) return;
      void this.session.abandon(`the sandbox agent did not answer for ${ANSWER_WITHIN_MS} ms while commands ran (stopped or hung); it was killed`);
      return;
    }
    this.unansweredSince = Date.now();
    this.session.notify({ type: "ping" }, () => (this.unansweredSince = undefined));
  }
}
