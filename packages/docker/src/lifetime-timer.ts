/** Timers cap at 2^31-1 ms (about 24.8 days); a longer lifetime relies on the in-container deadline alone. */
const LONGEST_TIMER_MS = 2 ** 31 - 1;

/** How long after its expiry the host removes a sandbox (the in-container deadline normally ends it first). */
const EXPIRY_GRACE_MS = 2000;

/** A running host-side lifetime timer. */
export interface LifetimeTimer {
  /** Stops the timer (the sandbox is being destroyed). Idempotent. */
  stop(): void;
}

/**
 * The host-side half of a sandbox's lifetime, while this process lives (the in-container deadline is the other half):
 * calls `onExpiry` 2 s after `expiresAt` (ISO time). Unref'd, so it never keeps the process alive; no timer at all for
 * an unreadable time or one further away than a timer can wait.
 */
export function startLifetimeTimer(options: { readonly expiresAt: string; readonly onExpiry: () => void }): LifetimeTimer {
  const expiresIn = Math.max(0, Date.parse(options.expiresAt) - Date.now()) + EXPIRY_GRACE_MS;
  if (!Number.isFinite(expiresIn) || expiresIn >= LONGEST_TIMER_MS) return { stop() {} };
  const timer = setTimeout(options.onExpiry, expiresIn);
  timer.unref();
  return { stop: () => clearTimeout(timer) };
}
