import { z } from "zod";
import { CapabilityNotSupportedError, InvalidArgumentError, ProviderError } from "../errors/index.js";
import { providerOf } from "../sandbox/sandbox-origin.js";
import { callAdapter, throwIfAborted } from "../security/guard.js";
import { validate } from "../security/validate.js";
import type { CreateSandboxOptions } from "../v1/options.js";
import type { SandboxProviderV1 } from "../v1/provider.js";
import type { Sandbox } from "../v1/sandbox.js";
import { sandboxSnapshotSchema, snapshotIdSchema, type SandboxSnapshot } from "../v1/snapshots.js";
import { backendsSupporting } from "./backend-registry.js";
import { checkProvider, createSandbox, loadProvider, parseOptions, parseTarget } from "./resolve-backend.js";
import { refuseUnknownSettings } from "./unknown-settings.js";

const signalSchema = z.custom<AbortSignal>((value) => value === undefined || value instanceof AbortSignal, "must be an AbortSignal");

/** Options of `listSnapshots()` and `deleteSnapshot()`. */
const snapshotStoreOptionsSchema = z
  .object({
    settings: z.record(z.string(), z.unknown()).optional(),
    signal: signalSchema.optional(),
  })
  .strict();

/** Options of `listSnapshots()` and `deleteSnapshot()`. */
export interface SnapshotStoreOptions {
  /** Backend settings for loading the adapter (for example the Docker engine's `socketPath`). Default none. */
  settings?: Record<string, unknown>;
  /** Aborts the call. */
  signal?: AbortSignal;
}

/** The most snapshots one listing returns; a backend answering more is refused rather than cut silently. */
const LONGEST_LISTING = 10_000;

/** The provider for `target`, refused with `CapabilityNotSupportedError` when it lacks `SNAPSHOTS`. */
async function snapshotProvider(target: string | SandboxProviderV1, settings: Record<string, unknown>): Promise<SandboxProviderV1> {
  const provider = typeof target === "string" ? await loadProvider(parseTarget(target).scheme, settings) : checkProvider(target);
  refuseUnknownSettings(provider, settings);
  if (!provider.capabilities.SNAPSHOTS || !provider.listSnapshots || !provider.deleteSnapshot)
    throw new CapabilityNotSupportedError({
      capability: "SNAPSHOTS",
      backend: provider.backend,
      supportedBy: backendsSupporting("SNAPSHOTS", provider.backend),
    });
  return provider;
}

/**
 * The snapshots sbx made on the backend (`sandbox.snapshot()`), by any process, oldest first (ADR 0056). They stay
 * until `deleteSnapshot()`: nothing deletes them automatically. Needs `SNAPSHOTS`; refused with
 * `CapabilityNotSupportedError` naming the backends that have it. `target` names the backend (`"docker://"`) or is a
 * provider object.
 */
export async function listSnapshots(target: string | SandboxProviderV1, options: SnapshotStoreOptions = {}): Promise<SandboxSnapshot[]> {
  const { settings = {}, signal } = validate(snapshotStoreOptionsSchema, options, "options");
  throwIfAborted(signal);
  const provider = await snapshotProvider(target, settings);
  const list = provider.listSnapshots!.bind(provider);
  const listed = await callAdapter(provider.backend, "list snapshots", [], () => list({ signal }));
  const parsed = z.array(sandboxSnapshotSchema).max(LONGEST_LISTING).safeParse(listed);
  if (!parsed.success || parsed.data.some((snapshot) => snapshot.backend !== provider.backend))
    throw new ProviderError({
      backend: provider.backend,
      message: `The ${provider.backend} backend answered the snapshot listing with something that is not a list of its snapshots (at most ${LONGEST_LISTING}).`,
    });
  return parsed.data.sort((left, right) => Date.parse(left.createdAt) - Date.parse(right.createdAt));
}

/**
 * Deletes the snapshot `id` and frees its storage (ADR 0056); resolves `true` when it was deleted, `false` when the
 * backend holds no snapshot of that id. The backend refuses an id that is not an sbx snapshot (`InvalidArgumentError`),
 * so nothing else is ever deleted; Docker also refuses while a sandbox created from it still runs. Needs `SNAPSHOTS`.
 */
export async function deleteSnapshot(target: string | SandboxProviderV1, id: string, options: SnapshotStoreOptions = {}): Promise<boolean> {
  const snapshotId = validate(snapshotIdSchema, id, "id");
  const { settings = {}, signal } = validate(snapshotStoreOptionsSchema, options, "options");
  throwIfAborted(signal);
  const provider = await snapshotProvider(target, settings);
  const remove = provider.deleteSnapshot!.bind(provider);
  const deleted = await callAdapter(provider.backend, "delete a snapshot", [], () => remove({ id: snapshotId, signal }));
  if (typeof deleted !== "boolean")
    throw new ProviderError({
      backend: provider.backend,
      message: `The ${provider.backend} backend did not say whether it deleted snapshot ${snapshotId}.`,
    });
  return deleted;
}

/** Options of `forkSandbox()`. */
export interface ForkSandboxOptions {
  /** How many sandboxes to create from the snapshot, 1 to 64. */
  count: number;
  /**
   * The options of every create (as for `createSandbox`, without `fromSnapshot`): network, limits, user, lifetime,
   * secrets, labels are the new sandboxes' own; nothing is taken from the forked sandbox. Default: `createSandbox`'s
   * defaults (egress denied, a 10-minute lifetime).
   */
  createOptions?: Omit<CreateSandboxOptions, "fromSnapshot" | "signal">;
  /** Aborts the snapshot and the creates; sandboxes already created are killed and the snapshot deleted. */
  signal?: AbortSignal;
}

/** What `forkSandbox()` returns. */
export interface ForkedSandboxes {
  /** The snapshot the copies were made from. The caller owns it: delete it with `deleteSnapshot` once it is not needed. */
  readonly snapshot: SandboxSnapshot;
  /** The new sandboxes, `count` of them; the caller owns and kills them. */
  readonly sandboxes: readonly Sandbox[];
}

const forkOptionsSchema = z
  .object({
    count: z.number().int().min(1).max(64),
    createOptions: z.record(z.string(), z.unknown()).optional(),
    signal: signalSchema.optional(),
  })
  .strict();

/** How many creates of one fork run at once. */
const FORK_CONCURRENCY = 4;

/**
 * Forks `sandbox`: one snapshot (`sandbox.snapshot()`), then `count` sandboxes created from it with `createOptions`
 * on the same backend (ADR 0056). All or nothing: when a create fails (or `signal` aborts), the sandboxes already made
 * are killed, the snapshot deleted, and the call rejects with that failure. A filesystem fork: the copies start with the
 * files, not with the running processes or memory. Needs `SNAPSHOTS`.
 */
export async function forkSandbox(sandbox: Sandbox, options: ForkSandboxOptions): Promise<ForkedSandboxes> {
  const { count, createOptions = {}, signal } = validate(forkOptionsSchema, options, "options");
  if ("fromSnapshot" in createOptions || "signal" in createOptions)
    throw new InvalidArgumentError({
      field: `options.createOptions.${"fromSnapshot" in createOptions ? "fromSnapshot" : "signal"}`,
      message: "Invalid options.createOptions: forkSandbox() sets fromSnapshot to the snapshot it takes, and its own signal covers every create.",
    });
  // Every create's options are checked before the snapshot is taken: a typo is thrown, not found after N creates.
  parseOptions(createOptions as CreateSandboxOptions);
  const provider = providerOf(sandbox);
  throwIfAborted(signal);
  const snapshot = await sandbox.snapshot({ signal });
  const sandboxes: Sandbox[] = [];
  try {
    let next = 0;
    let failed = false;
    const worker = async () => {
      while (next < count && !failed) {
        next += 1;
        try {
          throwIfAborted(signal);
          sandboxes.push(await createSandbox(provider, { ...(createOptions as CreateSandboxOptions), fromSnapshot: snapshot.id, signal }));
        } catch (error) {
          // The other workers start no further create once one failed.
          failed = true;
          throw error;
        }
      }
    };
    const workers = Array.from({ length: Math.min(FORK_CONCURRENCY, count) }, () => worker());
    const settled = await Promise.allSettled(workers);
    const rejected = settled.find((outcome) => outcome.status === "rejected");
    if (rejected) throw rejected.reason;
    return { snapshot, sandboxes };
  } catch (error) {
    await Promise.allSettled(sandboxes.map((made) => made.kill()));
    await deleteSnapshot(provider, snapshot.id).catch(() => false);
    throw error;
  }
}
