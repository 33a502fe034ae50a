/**
 * The emulator's objects: one store per kind and namespace, with the cluster-wide `resourceVersion` counter the real
 * API server keeps (every write bumps it), `uid` and `creationTimestamp` set on create, `409 AlreadyExists` on a
 * duplicate name, and a bounded history of changes for watches (`ADDED`, `MODIFIED`, `DELETED`): a watch from a
 * resourceVersion older than the history keeps is expired (`410 Gone`, reason `Expired`), as after etcd's compaction.
 */
import { randomUUID } from "node:crypto";

/** The metadata the emulator reads and sets. */
export interface ObjectMetadata {
  name?: string;
  generateName?: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  creationTimestamp?: string;
  deletionTimestamp?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  ownerReferences?: unknown[];
}

/** Any stored object: the emulator keeps what the client sent and adds metadata and status. */
export interface StoredObject {
  apiVersion?: string;
  kind?: string;
  metadata: ObjectMetadata;
  spec?: unknown;
  status?: unknown;
  [field: string]: unknown;
}

/** Thrown by the store for a duplicate name; the router turns it into a 409 Status. */
export class AlreadyExistsError extends Error {}

/** One change of a stored object, as a watch sends it. */
export interface WatchEvent<Stored extends StoredObject = StoredObject> {
  readonly type: "ADDED" | "MODIFIED" | "DELETED";
  /** A copy of the object after the change (its `resourceVersion` is the change's). */
  readonly object: Stored;
}

/** What `ObjectStore.watch` answers: the changes after the asked version, or that they are no longer kept. */
export type WatchStart<Stored extends StoredObject> =
  | { readonly expired: false; readonly replay: WatchEvent<Stored>[]; readonly stop: () => void }
  | { readonly expired: true; readonly oldestKept: string };

/** Changes kept per kind for watches, by default. */
export const DEFAULT_WATCH_HISTORY = 1000;

/** Objects of one kind, keyed by namespace and name. */
export class ObjectStore<Stored extends StoredObject> {
  private readonly objects = new Map<string, Stored>();
  private readonly history: WatchEvent<Stored>[] = [];
  private readonly listeners = new Set<(event: WatchEvent<Stored>) => void>();
  /** The newest resourceVersion whose changes are no longer all kept: a watch must start after it. */
  private compactedThrough: number;

  constructor(
    private readonly clock: { next(): string; current(): string },
    /** The plural resource name, for messages (`pods`). */
    readonly resource: string,
    /** How many changes the store keeps for watches. */
    private readonly historyLimit = DEFAULT_WATCH_HISTORY,
  ) {
    this.compactedThrough = Number(clock.current());
  }

  private record(type: WatchEvent["type"], object: Stored): void {
    const event: WatchEvent<Stored> = { type, object: structuredClone(object) };
    this.history.push(event);
    while (this.history.length > this.historyLimit) {
      const dropped = this.history.shift()!;
      this.compactedThrough = Number(dropped.object.metadata.resourceVersion);
    }
    for (const listener of this.listeners) listener(event);
  }

  /**
   * Starts watching after `resourceVersion`: the kept changes after it, then `listener` for each new one until `stop`.
   * Expired when changes after that version were dropped (the client must list again).
   */
  watch(resourceVersion: number, listener: (event: WatchEvent<Stored>) => void): WatchStart<Stored> {
    if (resourceVersion < this.compactedThrough) return { expired: true, oldestKept: String(this.compactedThrough) };
    const replay = this.history.filter((event) => Number(event.object.metadata.resourceVersion) > resourceVersion);
    this.listeners.add(listener);
    return { expired: false, replay, stop: () => this.listeners.delete(listener) };
  }

  /** Drops the whole history, as an etcd compaction does: a watch from any version before now is expired. */
  compact(): void {
    this.history.length = 0;
    this.compactedThrough = Number(this.clock.current());
  }

  private key(namespace: string, name: string): string {
    return `${namespace}/${name}`;
  }

  /** Stores a new object; throws `AlreadyExistsError` when the name is taken. */
  create(namespace: string, object: Stored): Stored {
    const name = object.metadata.name ?? `${object.metadata.generateName ?? "object-"}${randomUUID().slice(0, 5)}`;
    const key = this.key(namespace, name);
    if (this.objects.has(key)) throw new AlreadyExistsError(`${this.resource} "${name}" already exists`);
    object.metadata = {
      ...object.metadata,
      name,
      namespace,
      uid: randomUUID(),
      creationTimestamp: new Date().toISOString().replace(/\.\d+Z$/, "Z"),
      resourceVersion: this.clock.next(),
    };
    this.objects.set(key, object);
    this.record("ADDED", object);
    return object;
  }

  /** The object, or undefined. */
  get(namespace: string, name: string): Stored | undefined {
    return this.objects.get(this.key(namespace, name));
  }

  /** Applies `change` to a stored object and bumps its resourceVersion; no-op when it is gone. */
  update(namespace: string, name: string, change: (object: Stored) => void): Stored | undefined {
    const object = this.objects.get(this.key(namespace, name));
    if (!object) return undefined;
    change(object);
    object.metadata.resourceVersion = this.clock.next();
    this.record("MODIFIED", object);
    return object;
  }

  /** Removes and returns the object (its deletion stamped with a new resourceVersion), or undefined. */
  delete(namespace: string, name: string): Stored | undefined {
    const key = this.key(namespace, name);
    const object = this.objects.get(key);
    if (!object) return undefined;
    this.objects.delete(key);
    object.metadata.deletionTimestamp = new Date().toISOString().replace(/\.\d+Z$/, "Z");
    object.metadata.resourceVersion = this.clock.next();
    this.record("DELETED", object);
    return object;
  }

  /** Every object in `namespace` (all namespaces when undefined), in name order. */
  list(namespace: string | undefined): Stored[] {
    return [...this.objects.values()]
      .filter((object) => namespace === undefined || object.metadata.namespace === namespace)
      .sort((left, right) => (left.metadata.name ?? "").localeCompare(right.metadata.name ?? ""));
  }
}

/** The cluster-wide resourceVersion counter. */
export function createResourceVersionClock(): { next(): string; current(): string } {
  let version = 1000;
  return {
    next: () => String(++version),
    current: () => String(version),
  };
}
