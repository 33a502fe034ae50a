import type { SandboxEnd, SandboxEndReason } from "../v1/sandbox.js";
import { askProbe } from "../channel/loss-probe.js";
import type { SandboxDriverV1 } from "../v1/provider.js";

/**
 * How often core asks an open sandbox's driver (`probe()`) whether the sandbox still exists, when nothing else is
 * calling it: 10 s. Why: `closed` and `ended` must tell the truth soon after an operator removes the sandbox or its
 * host dies, not only once the next call fails (ADR 0045); one cheap status call every 10 s per open sandbox is what it
 * costs (Docker: an inspect; E2B, Modal: one status request).
 */
export const LOSS_CHECK_INTERVAL_MS = 10_000;

/** What the watch needs: the probe (when the driver has one), and what to do when it finds the sandbox gone. */
export interface SandboxEndWatchOptions {
  /** The driver's `probe()`, or undefined (no periodic loss check then: a failed call still finds the loss). */
  readonly probe: SandboxDriverV1["probe"];
  /** Epoch milliseconds the sandbox's lifetime ends, or undefined when unknown (a reconnected sandbox). */
  readonly lifetimeEndsAt: number | undefined;
  /** Called once when the lifetime ends (core's timer): marks the sandbox gone. */
  readonly onLifetimeEnd: () => void;
  /** Called once when a periodic probe answered `"gone"`: marks the sandbox gone. */
  readonly onFoundGone: () => void;
  /** True while the watch should not probe (a kill in progress). */
  readonly busy: () => boolean;
}

/**
 * The one place a sandbox's end is decided and announced (ADR 0045): the first of the caller's kill, the lifetime
 * (core's own timer, so `closed` is true the moment the lifetime ends even if nobody calls) and a loss (a failed call
 * the lost-sandbox rule settled, or a periodic `probe()` that answered `"gone"`) resolves `ended` with its reason.
 * Later reasons are ignored. Timers are unreferenced (they never keep the process alive) and cleared at the end.
 */
export class SandboxEndWatch {
  /** Resolves once, with the first reason; never rejects. */
  readonly ended: Promise<SandboxEnd>;
  private resolveEnded!: (end: SandboxEnd) => void;
  private outcome: SandboxEnd | undefined;
  private lifetimeTimer: NodeJS.Timeout | undefined;
  private lossTimer: NodeJS.Timeout | undefined;
  private probing = false;

  constructor(private readonly options: SandboxEndWatchOptions) {
    this.ended = new Promise((resolve) => (this.resolveEnded = resolve));
    const { lifetimeEndsAt } = options;
    if (lifetimeEndsAt !== undefined) this.moveLifetimeEnd(lifetimeEndsAt);
    if (options.probe) this.scheduleLossCheck(options.probe);
  }

  /**
   * Sets when the lifetime ends (epoch milliseconds), replacing the earlier end: at creation, and when
   * `sandbox.setLifetime` moved the backend's end (ADR 0050), so core's timer never ends an extended sandbox early.
   */
  moveLifetimeEnd(lifetimeEndsAt: number): void {
    if (this.outcome || !Number.isFinite(lifetimeEndsAt)) return;
    clearTimeout(this.lifetimeTimer);
    this.lifetimeTimer = setTimeout(
      () => {
        if (this.outcome) return;
        // The reason first: marking the sandbox gone also reports a loss, which must not take the lifetime's place.
        this.end("lifetime");
        this.options.onLifetimeEnd();
      },
      Math.max(0, lifetimeEndsAt - Date.now()),
    );
    this.lifetimeTimer.unref();
  }

  /** Records the end (the first call wins), stops the timers and resolves `ended`. */
  end(reason: SandboxEndReason): void {
    if (this.outcome) return;
    this.outcome = { reason, endedAt: new Date().toISOString() };
    clearTimeout(this.lifetimeTimer);
    clearTimeout(this.lossTimer);
    this.resolveEnded(this.outcome);
  }

  private scheduleLossCheck(probe: NonNullable<SandboxDriverV1["probe"]>): void {
    this.lossTimer = setTimeout(() => void this.checkLoss(probe), LOSS_CHECK_INTERVAL_MS);
    this.lossTimer.unref();
  }

  private async checkLoss(probe: NonNullable<SandboxDriverV1["probe"]>): Promise<void> {
    if (this.outcome || this.probing) return;
    if (!this.options.busy()) {
      this.probing = true;
      // askProbe is bounded and never throws: a probe that fails or hangs is "unknown", which proves nothing.
      const answer = await askProbe(probe);
      this.probing = false;
      if (this.outcome) return;
      if (answer === "gone" && !this.options.busy()) {
        this.end("lost");
        this.options.onFoundGone();
        return;
      }
    }
    this.scheduleLossCheck(probe);
  }
}
