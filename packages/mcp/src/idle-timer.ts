import type { ServerResponse } from "node:http";

/**
 * Fires `onIdle` once no request of a session has been open for `idleTimeoutMs`. Each tracked response counts as
 * activity while it is open (a long tool call keeps its session), and the clock restarts when the last one closes.
 * The timer is unref'd: it never keeps the process alive.
 */
export class IdleTimer {
  private open = 0;
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;

  constructor(
    private readonly idleTimeoutMs: number,
    private readonly onIdle: () => void,
  ) {
    this.arm();
  }

  /** Counts `response` as activity until it closes. */
  track(response: ServerResponse): void {
    if (this.stopped) return;
    this.open += 1;
    this.disarm();
    response.once("close", () => {
      this.open -= 1;
      if (this.open === 0) this.arm();
    });
  }

  /** Stops the clock for good (the session ended another way). */
  stop(): void {
    this.stopped = true;
    this.disarm();
  }

  private arm(): void {
    if (this.stopped) return;
    this.disarm();
    this.timer = setTimeout(() => {
      this.stopped = true;
      this.onIdle();
    }, this.idleTimeoutMs);
    this.timer.unref();
  }

  private disarm(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
  }
}
