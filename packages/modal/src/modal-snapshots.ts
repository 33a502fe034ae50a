/**
 * Snapshots on Modal (ADR 0062): `sandbox.snapshotFilesystem()` makes an Image of the sandbox's filesystem (files
 * only: Modal's `TaskSnapshotFilesystem`), kept without expiry and published under the name
 * `sbx-snapshot:<image id>` in the sandbox's environment, so sbx's snapshots can be listed (`ImageListTags` by that
 * prefix) and told apart from every other image. The snapshot id is the Modal image id. A create from it starts a
 * sandbox from that image with every policy of its own create; `deleteSnapshot` deletes the image (`ImageDelete`),
 * then its name.
 */
import { InvalidArgumentError, ProviderError, type SandboxSnapshot } from "@sbx/core";
import { throwIfAborted, type DriverAudit } from "@sbx/core/adapter";
import type { Image, ModalClient, Sandbox } from "modal";
import { mapModalError } from "./map-modal-error.js";

/** The image name every sbx snapshot is published under; its tag is the image id. */
export const SNAPSHOT_IMAGE_NAME = "sbx-snapshot";

/** What a Modal snapshot id looks like: a Modal image id. */
export const MODAL_SNAPSHOT_ID = /^im-[A-Za-z0-9]{1,64}$/;

/** The most snapshots one listing reads (core's bound); past it the listing is an error, never cut. */
export const LONGEST_SNAPSHOT_LISTING = 10_000;

/** One page of `ImageListTags` (Modal's largest). */
const LIST_PAGE = 100;

/** How long one filesystem snapshot may take before it is an error (Modal's own default budget is 55 s). */
export const SNAPSHOT_TIMEOUT_MS = 120_000;

/** Where snapshots live: the client and the Modal environment sbx's app is in. */
export interface ModalSnapshotStore {
  readonly modal: ModalClient;
  /** The environment name from the settings (undefined: the profile's). */
  readonly environment: string | undefined;
}

/** The published name of snapshot `id`. */
export function snapshotImageTag(id: string): string {
  return `${SNAPSHOT_IMAGE_NAME}:${id}`;
}

function isNotFound(error: unknown): boolean {
  const name = (error as { name?: unknown } | null)?.name;
  const code = (error as { code?: unknown } | null)?.code;
  return name === "NotFoundError" || (name === "ClientError" && code === 5);
}

/** Refuses an id that cannot be an sbx snapshot on Modal (`InvalidArgumentError` on `field`). */
function requireSnapshotId(id: string, field: string): void {
  if (!MODAL_SNAPSHOT_ID.test(id))
    throw new InvalidArgumentError({
      field,
      backend: "modal",
      message: `Invalid ${field}: ${JSON.stringify(id)} is not a Modal snapshot id (a Modal image id, "im-…", as sandbox.snapshot() and listSnapshots() return).`,
    });
}

/** The environment name the SDK sends for `store` (the settings', else the profile's, else the workspace default ""). */
function environmentOf(store: ModalSnapshotStore): string {
  return store.modal.environmentName(store.environment);
}

/** Reads the published entry of snapshot `id` (its creation time), or undefined when there is none. */
async function publishedEntry(store: ModalSnapshotStore, id: string): Promise<{ createdAt: number } | undefined> {
  const tag = snapshotImageTag(id);
  const answer = await store.modal.cpClient.imageListTags({
    environmentName: environmentOf(store),
    tagPrefix: tag,
    maxObjects: LIST_PAGE,
    imageId: id,
  });
  const entry = answer.items.find((item) => item.tag === tag && item.imageId === id);
  return entry ? { createdAt: entry.createdAt } : undefined;
}

function snapshotOf(id: string, createdAtSeconds: number): SandboxSnapshot {
  return { id, createdAt: new Date(Math.round(createdAtSeconds * 1000)).toISOString(), backend: "modal" };
}

/**
 * Takes a filesystem snapshot of `sandbox`: `snapshotFilesystem({ ttlMs: null })` (no expiry: nothing deletes a
 * snapshot but `deleteSnapshot`, ADR 0056), then `publish` under `sbx-snapshot:<image id>`. When the publish fails, the
 * image is deleted again (best effort) and the snapshot fails: an unnamed image would be storage no listing shows.
 */
export async function takeModalSnapshot(store: ModalSnapshotStore, sandbox: Sandbox, signal: AbortSignal | undefined): Promise<SandboxSnapshot> {
  throwIfAborted(signal, "modal");
  let image: Image;
  try {
    image = await sandbox.snapshotFilesystem({ ttlMs: null, timeoutMs: SNAPSHOT_TIMEOUT_MS });
  } catch (error) {
    throw mapModalError(error, { operation: "snapshot the sandbox's filesystem", sandboxId: sandbox.sandboxId });
  }
  const id = image.imageId;
  try {
    if (!MODAL_SNAPSHOT_ID.test(id))
      throw new ProviderError({ backend: "modal", message: `Modal answered the snapshot with an image id that is not one: ${JSON.stringify(id)}.` });
    throwIfAborted(signal, "modal");
    await image.publish(snapshotImageTag(id), store.environment ? { environment: store.environment } : {});
    const entry = await publishedEntry(store, id);
    if (!entry)
      throw new ProviderError({
        backend: "modal",
        message: `The snapshot image ${id} was published as ${snapshotImageTag(id)}, but Modal does not list it.`,
      });
    return snapshotOf(id, entry.createdAt);
  } catch (error) {
    await store.modal.images.delete(id).catch(() => undefined);
    throw mapModalError(error, { operation: "name the snapshot image", sandboxId: sandbox.sandboxId });
  }
}

/**
 * Every sbx snapshot in the environment, from `ImageListTags` with the prefix `sbx-snapshot:`, page by page; an entry
 * whose tag is not exactly `sbx-snapshot:<its image id>` is not sbx's and is left out. More than
 * `LONGEST_SNAPSHOT_LISTING` is an error (rule 2), as is a page token that repeats.
 */
export async function listModalSnapshots(store: ModalSnapshotStore, signal: AbortSignal | undefined): Promise<SandboxSnapshot[]> {
  const snapshots: SandboxSnapshot[] = [];
  const seenTokens = new Set<string>();
  let pageToken = "";
  try {
    for (;;) {
      throwIfAborted(signal, "modal");
      const page = await store.modal.cpClient.imageListTags({
        environmentName: environmentOf(store),
        tagPrefix: `${SNAPSHOT_IMAGE_NAME}:`,
        maxObjects: LIST_PAGE,
        pageToken,
        imageId: "",
      });
      for (const item of page.items) {
        if (item.tag === snapshotImageTag(item.imageId) && MODAL_SNAPSHOT_ID.test(item.imageId))
          snapshots.push(snapshotOf(item.imageId, item.createdAt));
      }
      if (snapshots.length > LONGEST_SNAPSHOT_LISTING)
        throw new ProviderError({
          backend: "modal",
          message: `Modal holds more than ${LONGEST_SNAPSHOT_LISTING} sbx snapshots; the listing is refused rather than cut. Delete snapshots with deleteSnapshot().`,
        });
      if (!page.nextPageToken) return snapshots;
      if (seenTokens.has(page.nextPageToken))
        throw new ProviderError({
          backend: "modal",
          message: "Modal's image listing repeated a page; the snapshot listing is refused rather than cut.",
        });
      seenTokens.add(page.nextPageToken);
      pageToken = page.nextPageToken;
    }
  } catch (error) {
    throw mapModalError(error, { operation: "list snapshots" });
  }
}

/**
 * Deletes snapshot `id`: `false` when no sbx snapshot of that id is published; otherwise the image is deleted
 * (`ImageDelete`: no sandbox can start from it any more; sandboxes already running from it keep running), then its
 * name. A retry after a failure between the two finds the name, and finishes.
 */
export async function deleteModalSnapshot(store: ModalSnapshotStore, id: string, signal: AbortSignal | undefined): Promise<boolean> {
  requireSnapshotId(id, "id");
  throwIfAborted(signal, "modal");
  try {
    if (!(await publishedEntry(store, id))) return false;
    await store.modal.images.delete(id).catch((error: unknown) => {
      if (!isNotFound(error)) throw error;
    });
    const environment = environmentOf(store);
    await store.modal.cpClient
      .imageNameDelete({ tag: environment ? `${environment}/${snapshotImageTag(id)}` : snapshotImageTag(id) })
      .catch((error: unknown) => {
        if (!isNotFound(error)) throw error;
      });
    return true;
  } catch (error) {
    throw mapModalError(error, { operation: "delete a snapshot" });
  }
}

/**
 * The image a create with `fromSnapshot` starts from, checked before anything is created: an sbx snapshot published in
 * this environment (`InvalidArgumentError` on `options.fromSnapshot` otherwise). A target naming an image as well is
 * refused: the snapshot's image is the sandbox's.
 */
export async function snapshotImageForCreate(store: ModalSnapshotStore, id: string, target: string): Promise<Image> {
  if (target.length > 0)
    throw new InvalidArgumentError({
      field: "target",
      backend: "modal",
      message: `Invalid target: "modal://${target}" names an image, and options.fromSnapshot names the snapshot whose image the sandbox starts from; pass "modal://" with fromSnapshot.`,
    });
  requireSnapshotId(id, "options.fromSnapshot");
  const missing = () =>
    new InvalidArgumentError({
      field: "options.fromSnapshot",
      backend: "modal",
      message: `Invalid options.fromSnapshot: Modal holds no sbx snapshot ${id} in this environment (deleted, or never made here); listSnapshots() lists those there are.`,
    });
  try {
    if (!(await publishedEntry(store, id))) throw missing();
    return await store.modal.images.fromId(id);
  } catch (error) {
    if (isNotFound(error)) throw missing();
    throw mapModalError(error, { operation: "find the snapshot's image" });
  }
}

/**
 * The audit record of a sandbox made from a snapshot: `policies.snapshot` names it and says nothing else came from it
 * (every other policy is this create's, recorded beside it).
 */
export function withSnapshotRecord(audit: DriverAudit, snapshotId: string | undefined): DriverAudit {
  if (snapshotId === undefined) return audit;
  return {
    ...audit,
    policies: {
      ...audit.policies,
      snapshot: {
        requested: { fromSnapshot: snapshotId },
        applied: { image: snapshotId, restored: "filesystem" },
        enforcement:
          "files only: the sandbox was created from the snapshot's image (Modal's filesystem snapshot, which holds no environment, secret or process); network, limits, user, lifetime, environment, secrets and labels are this create's own.",
      },
    },
  };
}
