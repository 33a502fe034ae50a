/**
 * The emulator's objects: one store per kind and namespace, with the cluster-wide `resourceVersion` counter the real
 * API server keeps (every write bumps it), `uid` and `creationTimestamp` set on create, and `409 AlreadyExists` on a
 * duplicate name.
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

/** Objects of one kind, keyed by namespace and name. */
export class ObjectStore<Stored extends StoredObject> {
  private readonly objects = new Map<string, Stored>();

  constructor(
    private readonly clock: { next(): string },
    /** The plural resource name, for messages (`pods`). */
    readonly resource: string,
  ) {}

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
    return object;
  }

  /** Removes and returns the object, or undefined. */
  delete(namespace: string, name: string): Stored | undefined {
    const key = this.key(namespace, name);
    const object = this.objects.get(key);
    this.objects.delete(key);
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
