import { InvalidArgumentError, SandboxClosedError } from "../errors/index.js";
import { refuseCapabilityMethodMismatch } from "../backends/capability-method-check.js";
import { loggedCall } from "../backends/backend-logging.js";
import { parseOptions, refuseUnsupportedPolicies, wrapOrDestroy } from "../backends/resolve-backend.js";
import { resolveProvider } from "../backends/resolve-provider.js";
import { refuseUnknownSettings } from "../backends/unknown-settings.js";
import { createSandboxWithCredentials, revokeOrphansBeforeIssuing, splitCredentialSources } from "../credentials/create-sandbox-with-credentials.js";
import { createSandboxFromDriver } from "../sandbox/create-sandbox-from-driver.js";
import { callAdapter, throwIfAborted } from "../security/guard.js";
import { refuseUnredactableSecrets } from "../security/unredactable-secrets.js";
import { validate } from "../security/validate.js";
import type { SandboxLogger } from "../v1/logging.js";
import { createSandboxOptionsSchema, type CreateSandboxOptions, type ResolvedCreateOptions } from "../v1/options.js";
import type { SandboxDriverV1, SandboxProviderV1 } from "../v1/provider.js";
import type { Sandbox } from "../v1/sandbox.js";
import type { PooledSandboxFacts } from "./pooled-sandbox-facts.js";
import {
  acquireOptionsSchema,
  sandboxPoolOptionsSchema,
  type AcquireSandboxOptions,
  type SandboxPoolOptions,
  type SandboxPoolStats,
} from "./sandbox-pool-options.js";
import { destroyWarmDriver, warmDriver } from "./warm-driver.js";

/** The longest lifetime plus idle bound a backend deadline may be given: `createSandbox`'s own maximum, 7 days. */
const LONGEST_BACKEND_LIFETIME_MS = 7 * 24 * 3600 * 1000;
/** The first wait before creating again after a failed create, doubled per failure in a row up to `LONGEST_RETRY_MS`. */
const FIRST_RETRY_MS = 250;
const LONGEST_RETRY_MS = 30_000;
/** Creates failed in a row before each further failure reaches the oldest waiter (and `warm()`): a transient one is retried unseen. */
const FAILURES_BEFORE_CALLERS_SEE_THEM = 3;
/**
 * How long after an acquire that left no caller waiting the pool waits before it starts the create replacing the
 * sandbox handed out. A create is the heaviest work a backend does (on Docker: the engine's create, runc's start, the
 * agent's Python start), and started at once it competes with the caller's first command for the same CPU: measured
 * on Docker (ADR 0057), that contention, not anything in the new sandbox, is why a first command cost about twice a
 * later one. A caller that waits for a sandbox never waits for this delay: its create starts at once.
 */
export const REFILL_AFTER_ACQUIRE_MS = 100;

/** A created, warmed sandbox waiting in the pool. */
interface IdleSandbox {
  readonly driver: SandboxDriverV1;
  /** Epoch ms the backend was asked to create it. */
  readonly createdAt: number;
  /** Destroys it once it sat idle for `maxIdleMs`. */
  readonly expiry: NodeJS.Timeout;
}

/** A caller of `acquire()` waiting for the next sandbox. */
interface Waiter {
  readonly take: (idle: { driver: SandboxDriverV1; createdAt: number }) => void;
  readonly fail: (error: unknown) => void;
}

/** What every create of the pool shares: the provider, resolved once, and the validated options. */
interface PoolCreation {
  readonly provider: SandboxProviderV1;
  readonly target: string;
  /** The options each sandbox is created with: `timeoutMs` is the idle bound plus the lifetime (the backend's deadline). */
  readonly options: ResolvedCreateOptions;
  /** The lifetime from acquire, in ms. */
  readonly lifetimeMs: number;
  readonly logger: SandboxLogger | undefined;
}

/**
 * A warm pool of sandboxes for one target and one set of create options (ADR 0050): it keeps `size` sandboxes created
 * with their agent started, refills in the background with at most `refillConcurrency` creates at once (the create
 * replacing an acquired sandbox starts `REFILL_AFTER_ACQUIRE_MS` later unless a caller waits, ADR 0057), and hands
 * each sandbox out once (`acquire()`); a sandbox is never returned to the pool. Works on every backend (core's job).
 * Idle sandboxes are destroyed on `close()`, when the process is about to exit (`beforeExit`), when they sat idle for
 * `maxIdleMs`, and, should the host die, by the backend's own deadline (and on Docker its dead-man's switch).
 */
export class SandboxPool implements AsyncDisposable {
  private readonly idle: IdleSandbox[] = [];
  private readonly waiters: Waiter[] = [];
  private readonly abort = new AbortController();
  private readonly counts = { created: 0, acquired: 0, expired: 0, failed: 0 };
  private creating = 0;
  private failuresInARow = 0;
  private retryTimer: NodeJS.Timeout | undefined;
  /** The deferred refill after an acquire (`REFILL_AFTER_ACQUIRE_MS`), while one is pending. */
  private deferredRefill: NodeJS.Timeout | undefined;
  private lastError: Error | null = null;
  private closing: Promise<void> | undefined;
  private readonly inFlight = new Set<Promise<void>>();
  private readonly onBeforeExit = () => void this.close();
  private readonly changeListeners: Array<() => void> = [];

  /** Use `createSandboxPool()`. */
  constructor(
    private readonly creation: PoolCreation,
    private readonly settings: { readonly size: number; readonly maxIdleMs: number; readonly refillConcurrency: number },
  ) {
    process.once("beforeExit", this.onBeforeExit);
    this.refill();
  }

  /** The backend the pool creates on, for example `"docker"`. */
  get backend(): string {
    return this.creation.provider.backend;
  }

  /** True once `close()` was called (or the pool's signal aborted). */
  get closed(): boolean {
    return this.closing !== undefined;
  }

  /** Counts of what the pool holds and did, and the last create failure. */
  stats(): SandboxPoolStats {
    return {
      idle: this.idle.length,
      creating: this.creating,
      waiting: this.waiters.length,
      ...this.counts,
      lastError: this.lastError,
    };
  }

  /**
   * Hands out a sandbox no one has used: an idle one at once, else the next one created (waiting, bounded by
   * `signal`). Its per-acquire `secrets` are applied now (credentials issued for it now, revoked when it ends); its
   * lifetime (`createOptions.timeoutMs`) counts from now; its audit record says it came from the pool and when it was
   * created (`policies.pool`). The caller owns it: kill it (or `await using`) when done; it never goes back.
   * Rejects with `SandboxClosedError` once the pool is closed, with a create's error once creates failed three times
   * in a row (the pool keeps retrying), with `AbortedError` on `signal`.
   */
  async acquire(options: AcquireSandboxOptions = {}): Promise<Sandbox> {
    const { secrets, sources, signal } = this.parseAcquireOptions(options);
    throwIfAborted(signal, this.backend);
    if (this.closed) throw this.closedError();
    const taken = this.idle.shift();
    let next: { driver: SandboxDriverV1; createdAt: number };
    if (taken) {
      clearTimeout(taken.expiry);
      next = taken;
    } else next = await this.waitForNext(signal);
    this.counts.acquired += 1;
    this.refillSoon();
    return this.handOut(next, { secrets, sources, signal });
  }

  /**
   * Resolves once the pool holds `size` idle sandboxes (for a benchmark or a service's start-up); rejects with the
   * create's error once creates failed three times in a row, `SandboxClosedError` when the pool closes, `AbortedError` on `signal`.
   */
  async warm(options: { signal?: AbortSignal } = {}): Promise<void> {
    for (;;) {
      throwIfAborted(options.signal, this.backend);
      if (this.closed) throw this.closedError();
      if (this.idle.length >= this.settings.size) return;
      await this.nextChange(options.signal);
      if (this.failuresInARow >= FAILURES_BEFORE_CALLERS_SEE_THEM && this.lastError) throw this.lastError;
    }
  }

  /** Resolves at the pool's next change (a create finished or failed, an acquire, close) or when `signal` aborts. */
  private nextChange(signal: AbortSignal | undefined): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        signal?.removeEventListener("abort", done);
        resolve();
      };
      this.changeListeners.push(done);
      signal?.addEventListener("abort", done, { once: true });
    });
  }

  /** Tells everyone waiting in `nextChange`. */
  private changed(): void {
    for (const listener of this.changeListeners.splice(0)) listener();
  }

  /**
   * Closes the pool: no more acquires (waiting ones reject with `SandboxClosedError`), creates in progress are
   * aborted, and every idle sandbox is destroyed; resolves once they are. Sandboxes already acquired are their
   * callers' and keep running. Idempotent.
   */
  close(): Promise<void> {
    this.closing ??= this.drain();
    return this.closing;
  }

  /** `await using pool = await createSandboxPool(...)` closes it. */
  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }

  private async drain(): Promise<void> {
    process.removeListener("beforeExit", this.onBeforeExit);
    this.abort.abort();
    clearTimeout(this.retryTimer);
    clearTimeout(this.deferredRefill);
    for (const waiter of this.waiters.splice(0)) waiter.fail(this.closedError());
    const idle = this.idle.splice(0);
    for (const entry of idle) clearTimeout(entry.expiry);
    this.changed();
    await Promise.allSettled([...idle.map((entry) => destroyWarmDriver(entry.driver)), ...this.inFlight]);
  }

  private closedError(): SandboxClosedError {
    return new SandboxClosedError({ backend: this.backend, sandboxId: "", operation: "acquire", message: "The sandbox pool is closed." });
  }

  private parseAcquireOptions(options: AcquireSandboxOptions) {
    const { secrets: given, signal } = validate(acquireOptionsSchema, options, "options");
    const split = splitCredentialSources({ secrets: given ?? {} });
    const secrets = validate(createSandboxOptionsSchema.shape.secrets, split.options.secrets, "options.secrets");
    refuseUnredactableSecrets(secrets, this.backend);
    return { secrets, sources: split.sources, signal };
  }

  private waitForNext(signal: AbortSignal | undefined): Promise<{ driver: SandboxDriverV1; createdAt: number }> {
    return new Promise((resolve, reject) => {
      const onAbort = () => {
        const index = this.waiters.indexOf(waiter);
        if (index >= 0) this.waiters.splice(index, 1);
        reject(abortedError(signal, this.backend));
      };
      const waiter: Waiter = {
        take: (idle) => {
          signal?.removeEventListener("abort", onAbort);
          resolve(idle);
        },
        fail: (error) => {
          signal?.removeEventListener("abort", onAbort);
          reject(error);
        },
      };
      signal?.addEventListener("abort", onAbort, { once: true });
      this.waiters.push(waiter);
      this.refill();
    });
  }

  /** Builds the caller's `Sandbox` around a pooled driver, with this acquire's secrets and the lifetime from now. */
  private async handOut(
    idle: { driver: SandboxDriverV1; createdAt: number },
    acquire: { secrets: Record<string, string>; sources: ReturnType<typeof splitCredentialSources>["sources"]; signal: AbortSignal | undefined },
  ): Promise<Sandbox> {
    const { provider, target, logger, lifetimeMs } = this.creation;
    const { driver } = idle;
    const acquiredAt = Date.now();
    const pool: PooledSandboxFacts = { createdAt: idle.createdAt, acquiredAt, lifetimeMs, maxIdleMs: this.settings.maxIdleMs };
    const options: ResolvedCreateOptions = { ...this.creation.options, timeoutMs: lifetimeMs, secrets: acquire.secrets };
    let sandbox: Sandbox;
    if (acquire.sources.size > 0) {
      await revokeOrphansBeforeIssuing(acquire.sources, acquire.signal);
      sandbox = await createSandboxWithCredentials({
        driver,
        provider,
        target,
        options,
        sources: acquire.sources,
        signal: acquire.signal,
        createStartedAt: acquiredAt,
        logger,
        pool,
      });
    } else sandbox = await wrapOrDestroy(driver, () => createSandboxFromDriver(driver, { provider, target, options, logger, pool }));
    // The lifetime from acquire, enforced by the host (the sandbox cannot reach this process); the backend's own
    // deadline, set at create to maxIdleMs + lifetimeMs, bounds it should the host die.
    const lifetime = setTimeout(() => void sandbox.kill().catch(() => {}), lifetimeMs);
    lifetime.unref();
    return sandbox;
  }

  /**
   * After an acquire: the refill starts `REFILL_AFTER_ACQUIRE_MS` later, so the caller's first command does not share
   * the CPU with the backend's create; at once when a caller is waiting (or the delay is 0).
   */
  private refillSoon(): void {
    if (this.waiters.length > 0 || REFILL_AFTER_ACQUIRE_MS <= 0) return this.refill();
    this.deferredRefill ??= setTimeout(() => {
      this.deferredRefill = undefined;
      this.refill();
    }, REFILL_AFTER_ACQUIRE_MS);
  }

  /** Starts creates until idle + creating covers `size` and every waiter, at most `refillConcurrency` at once. */
  private refill(): void {
    if (this.closed || this.retryTimer !== undefined) return;
    const { size, refillConcurrency } = this.settings;
    while (this.creating < refillConcurrency && this.idle.length + this.creating < size + this.waiters.length) {
      this.creating += 1;
      const created = this.createOne().finally(() => {
        this.creating -= 1;
        this.inFlight.delete(created);
        this.refill();
      });
      this.inFlight.add(created);
    }
  }

  private async createOne(): Promise<void> {
    const { provider, target, options, logger } = this.creation;
    const signal = this.abort.signal;
    const createdAt = Date.now();
    let driver: SandboxDriverV1;
    try {
      const created = await callAdapter(provider.backend, "create a sandbox", [], () =>
        loggedCall(logger, [], { backend: provider.backend, operation: "create", detail: target }, () =>
          provider.create({ target, options, signal }),
        ),
      );
      await wrapOrDestroy(created, () =>
        refuseCapabilityMethodMismatch({ holder: "driver", target: created, capabilities: provider.capabilities, backend: provider.backend }),
      );
      driver = await warmDriver(created, provider.backend).catch(async (error: unknown) => {
        await destroyWarmDriver(created).catch(() => {});
        throw error;
      });
    } catch (error) {
      this.createFailed(error);
      return;
    }
    this.failuresInARow = 0;
    this.counts.created += 1;
    if (this.closed) {
      await destroyWarmDriver(driver).catch(() => {});
      return;
    }
    const waiter = this.waiters.shift();
    if (waiter) {
      waiter.take({ driver, createdAt });
      return;
    }
    const expiry = setTimeout(() => this.expire(driver), Math.max(0, createdAt + this.settings.maxIdleMs - Date.now()));
    expiry.unref();
    this.idle.push({ driver, createdAt, expiry });
    this.changed();
  }

  /**
   * A failed create: the pool waits (250 ms, doubling up to 30 s) before creating again; from the third failure in a
   * row on, each failure also reaches the oldest waiter and `warm()`, so a backend that cannot create never leaves a
   * caller waiting without end.
   */
  private createFailed(error: unknown): void {
    if (this.closed) return;
    this.counts.failed += 1;
    this.lastError = error instanceof Error ? error : new Error(String(error));
    this.failuresInARow += 1;
    if (this.failuresInARow >= FAILURES_BEFORE_CALLERS_SEE_THEM) {
      this.waiters.shift()?.fail(error);
      this.changed();
    }
    const delay = Math.min(LONGEST_RETRY_MS, FIRST_RETRY_MS * 2 ** (this.failuresInARow - 1));
    this.retryTimer ??= setTimeout(() => {
      this.retryTimer = undefined;
      this.refill();
    }, delay);
    this.retryTimer.unref();
  }

  /** An idle sandbox past `maxIdleMs`: destroyed and replaced. */
  private expire(driver: SandboxDriverV1): void {
    const index = this.idle.findIndex((entry) => entry.driver === driver);
    if (index < 0) return;
    this.idle.splice(index, 1);
    this.counts.expired += 1;
    const destroyed = destroyWarmDriver(driver)
      .catch(() => {})
      .finally(() => this.inFlight.delete(destroyed));
    this.inFlight.add(destroyed);
    this.refill();
  }
}

function abortedError(signal: AbortSignal | undefined, backend: string): unknown {
  try {
    throwIfAborted(signal, backend);
  } catch (error) {
    return error;
  }
  return new Error("aborted");
}

/**
 * Creates a warm pool of sandboxes for one target and one set of create options (ADR 0050), on any backend: the
 * provider is resolved and the options validated now (an error here is thrown, before anything is created), then
 * the pool fills in the background. `await pool.warm()` waits until it is full; `pool.acquire({ secrets })` hands a
 * sandbox out.
 * @example
 * await using pool = await createSandboxPool("docker://python:3.12-slim", { size: 4 });
 * await using sandbox = await pool.acquire({ secrets: { API_TOKEN: token } });
 */
export async function createSandboxPool(target: string | SandboxProviderV1, options: SandboxPoolOptions): Promise<SandboxPool> {
  if (typeof options !== "object" || options === null)
    throw new InvalidArgumentError({ field: "options", message: "Invalid options: expected an object with at least { size }." });
  const { size, createOptions, maxIdleMs, refillConcurrency, signal } = validate(sandboxPoolOptionsSchema, options, "options");
  refusePoolTimeCreateOptions(createOptions);
  const parsed = parseOptions(createOptions);
  const { resolved, backends, logger } = parsed;
  const lifetimeMs = resolved.timeoutMs;
  if (lifetimeMs + maxIdleMs > LONGEST_BACKEND_LIFETIME_MS)
    throw new InvalidArgumentError({
      field: "options.maxIdleMs",
      message: `Invalid options.maxIdleMs: maxIdleMs (${maxIdleMs}) plus createOptions.timeoutMs (${lifetimeMs}) is the backend deadline of a pooled sandbox and may not exceed ${LONGEST_BACKEND_LIFETIME_MS} ms (7 days).`,
    });
  throwIfAborted(signal);
  const { provider, providerTarget } = await resolveProvider(target, resolved, backends, signal);
  refuseUnknownSettings(provider, resolved.settings);
  refuseUnsupportedPolicies(provider, resolved);
  const pool = new SandboxPool(
    { provider, target: providerTarget, options: { ...resolved, timeoutMs: lifetimeMs + maxIdleMs }, lifetimeMs, logger },
    { size, maxIdleMs, refillConcurrency },
  );
  signal?.addEventListener("abort", () => void pool.close(), { once: true });
  return pool;
}

/** Refuses create options a pool cannot honour per sandbox: secrets (given per acquire), initial files (not written by a pool) and a create-time signal (the pool's own). */
function refusePoolTimeCreateOptions(createOptions: CreateSandboxOptions | undefined): void {
  if (createOptions?.secrets !== undefined && Object.keys(createOptions.secrets).length > 0)
    throw new InvalidArgumentError({
      field: "options.createOptions.secrets",
      message:
        "Invalid options.createOptions.secrets: a pool never bakes secrets into sandboxes made before anyone asked for them; pass them to pool.acquire({ secrets }), where credentials are issued for the sandbox handed out and revoked when it ends.",
    });
  if (createOptions?.files !== undefined)
    throw new InvalidArgumentError({
      field: "options.createOptions.files",
      message:
        "Invalid options.createOptions.files: a pool does not write initial files into the sandboxes it keeps warm yet; write them after pool.acquire() with sandbox.files.write().",
    });
  if (createOptions?.signal !== undefined)
    throw new InvalidArgumentError({
      field: "options.createOptions.signal",
      message: "Invalid options.createOptions.signal: pass the pool's own signal as options.signal (aborting it closes the pool).",
    });
}
