/**
 * Sandbox containers started ahead of demand (ADR 0041). Starting a container and preparing it (user account, helper
 * files) takes seconds on a loaded engine, and a test suite creates sandboxes one after another with the same
 * settings. So once a create asked for some settings, one more container with those settings is started and prepared
 * in the background; the next create with the same settings takes it and only applies what belongs to that sandbox
 * (its deadline, its firewall rules). The real services do the same: a sandbox is resumed from a prepared snapshot,
 * not booted on demand. A taken container was never used before: every sandbox still gets a fresh one.
 */

/** One container being prepared, or ready, for a key. */
interface WarmEntry<Prepared> {
  /** Settles with the prepared container, or `undefined` when preparing it failed. */
  readonly prepared: Promise<Prepared | undefined>;
  /** When preparing started (`Date.now()`). */
  readonly startedAt: number;
}

/** How a pool prepares and discards containers. */
export interface WarmContainerPoolOptions<Prepared> {
  /**
   * A warm container older than this is discarded instead of used, in milliseconds: it was prepared with a backstop
   * deadline of its own (the container ends itself if the emulator dies), which must not run out under a sandbox.
   */
  readonly maxAgeMs: number;
  /** Removes a prepared container nobody will use (at `close`, when too old, or when the pool has too many keys). */
  readonly discard: (prepared: Prepared) => Promise<void>;
  /** Keys kept warm at once; the least recently taken is dropped beyond it. Default 3. */
  readonly maxKeys?: number;
}

/** At most one warm container per key (the settings that shape a container), refilled on every `take`. */
export class WarmContainerPool<Prepared> {
  private readonly entries = new Map<string, WarmEntry<Prepared>>();
  private closed = false;

  constructor(private readonly options: WarmContainerPoolOptions<Prepared>) {}

  /**
   * Takes the container warmed for `key` (waiting for it if it is still being prepared: it started before this
   * request, so that is never slower than preparing another), or `undefined` when there is none, it failed or it is
   * too old; either way one more is started for the next create with this key. `prepare` makes one container.
   */
  async take(key: string, prepare: () => Promise<Prepared>): Promise<Prepared | undefined> {
    if (this.closed) return undefined;
    const entry = this.entries.get(key);
    this.entries.delete(key);
    this.refill(key, prepare);
    if (!entry) return undefined;
    const prepared = await entry.prepared;
    if (prepared === undefined) return undefined;
    if (this.closed || Date.now() - entry.startedAt > this.options.maxAgeMs) {
      await this.options.discard(prepared).catch(() => undefined);
      return undefined;
    }
    return prepared;
  }

  private refill(key: string, prepare: () => Promise<Prepared>): void {
    const prepared = prepare().catch(() => undefined);
    this.entries.set(key, { prepared, startedAt: Date.now() });
    const maxKeys = this.options.maxKeys ?? 3;
    for (const [oldKey, oldEntry] of this.entries) {
      if (this.entries.size <= maxKeys) break;
      this.entries.delete(oldKey);
      this.discardWhenReady(oldEntry);
    }
  }

  private discardWhenReady(entry: WarmEntry<Prepared>): void {
    void entry.prepared.then((prepared) => (prepared === undefined ? undefined : this.options.discard(prepared))).catch(() => undefined);
  }

  /** Stops warming and removes every warm container (waits for those still being prepared). Idempotent. */
  async close(): Promise<void> {
    this.closed = true;
    const entries = [...this.entries.values()];
    this.entries.clear();
    await Promise.all(
      entries.map(async (entry) => {
        const prepared = await entry.prepared;
        if (prepared !== undefined) await this.options.discard(prepared).catch(() => undefined);
      }),
    );
  }
}
