import type { FileWatchEvent } from "../v1/sandbox.js";

/** Events a watch holds for a consumer that has not read them yet, by default (`FileWatchOptions.maxBufferedEvents`). */
export const DEFAULT_MAX_BUFFERED_WATCH_EVENTS = 10_000;

/** How a watch's event stream ended: normally (stopped by the caller) or with an error. */
type QueueEnd = { readonly error: Error | undefined };

/**
 * The bounded buffer between a backend's watch callbacks and the caller's iteration (ADR 0049). Consecutive writes to
 * one path are coalesced; past `maxEvents` held, events are dropped and counted in one `"overflow"` marker at the tail
 * (it holds the count until the consumer reads it; nothing overtakes it), so a burst of any size costs at most
 * `maxEvents + 1` events of memory. A backend's own overflow (count unknown) merges into it. `push` never throws.
 */
export class WatchEventQueue implements AsyncIterator<FileWatchEvent> {
  private readonly events: FileWatchEvent[] = [];
  private head = 0;
  private waiting: ((result: IteratorResult<FileWatchEvent>) => void) | undefined;
  private failWaiting: ((error: Error) => void) | undefined;
  private end: QueueEnd | undefined;

  constructor(
    private readonly watchedPath: string,
    private readonly maxEvents: number,
  ) {}

  private get size(): number {
    return this.events.length - this.head;
  }

  /** The unread overflow marker at the tail of the buffer, if there is one. */
  private get pendingMarker(): FileWatchEvent | undefined {
    const last = this.size > 0 ? this.events[this.events.length - 1] : undefined;
    return last?.type === "overflow" ? last : undefined;
  }

  /** Adds one event from the backend (ignored after the end). */
  push(event: FileWatchEvent): void {
    if (this.end) return;
    if (event.type === "overflow") return this.drop(event.dropped ?? null);
    const last = this.size > 0 ? this.events[this.events.length - 1] : undefined;
    if (event.type === "write" && last?.type === "write" && last.path === event.path) return;
    // Past the bound, or behind an unread marker (order: nothing may overtake events that were dropped).
    if (this.size >= this.maxEvents || this.pendingMarker) return this.drop(1);
    this.deliver(event);
  }

  /**
   * Counts dropped events into the unread marker at the tail, or queues a new marker (one slot beyond `maxEvents` is
   * kept for it). A count of null (the backend lost some) makes the marker's count unknown.
   */
  private drop(count: number | null): void {
    const marker = this.pendingMarker;
    if (marker) {
      const dropped = marker.dropped === null || marker.dropped === undefined || count === null ? null : marker.dropped + count;
      this.events[this.events.length - 1] = { ...marker, dropped };
      return;
    }
    this.deliver({ type: "overflow", path: this.watchedPath, isDirectory: false, dropped: count });
  }

  private deliver(event: FileWatchEvent): void {
    const waiting = this.waiting;
    if (waiting) {
      this.waiting = undefined;
      this.failWaiting = undefined;
      waiting({ value: event, done: false });
      return;
    }
    this.events.push(event);
  }

  /** Ends the stream: buffered events are still read, then iteration ends (or throws `error`). Only the first end counts. */
  finish(error?: Error): void {
    if (this.end) return;
    this.end = { error };
    if (this.waiting && this.size === 0) {
      const waiting = this.waiting;
      const failWaiting = this.failWaiting!;
      this.waiting = undefined;
      this.failWaiting = undefined;
      if (error) failWaiting(error);
      else waiting({ value: undefined, done: true });
    }
  }

  /** The next event, waiting for one; done once the stream ended and the buffer is empty. */
  next(): Promise<IteratorResult<FileWatchEvent>> {
    if (this.size > 0) {
      const value = this.events[this.head]!;
      this.head += 1;
      if (this.head > 1024 && this.head * 2 > this.events.length) {
        this.events.splice(0, this.head);
        this.head = 0;
      }
      return Promise.resolve({ value, done: false });
    }
    if (this.end) return this.end.error ? Promise.reject(this.end.error) : Promise.resolve({ value: undefined, done: true });
    return new Promise<IteratorResult<FileWatchEvent>>((resolve, reject) => {
      this.waiting = resolve;
      this.failWaiting = reject;
    });
  }
}
