/**
 * Filesystem snapshots and named images (ADR 0062), as Modal serves them to `modal@0.11.1`:
 * - the task command router's `TaskSnapshotFilesystem` (what `sandbox.snapshotFilesystem()` sends) makes an image of
 *   the sandbox's filesystem **alone**: the container is exported (`docker export`, the root filesystem's files) and
 *   imported as a new image whose only config is the base image's own `Env`, `User` and `WorkingDir`. Never
 *   `docker commit`, which records the container's configuration; the sandbox's environment (its secrets) is given to
 *   each exec and never written into the container's config either, so nothing of it can reach the stored image;
 * - the control plane's `ImagePublish`, `ImageGetByTag`, `ImageListTags` and `ImageNameDelete` (named images: a name
 *   `name:tag` in an environment pointing at an image id) and `ImageDelete` (an image can no longer be used at once;
 *   its Docker image is removed as soon as no container runs from it, at the latest when the emulator stops).
 */
import { randomBytes } from "node:crypto";
import type { Readable } from "node:stream";
import type Docker from "dockerode";
import { ServerError, Status } from "nice-grpc";
import type { EmulatedSandbox } from "./emulated-sandbox.js";
import type { EmulatorState } from "./emulator-state.js";
import { EMULATOR_INSTANCE_LABEL, EMULATOR_LABEL } from "./sandbox-container.js";

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- gRPC messages decoded from the proto definitions at run time, untyped
type Message = Record<string, any>;

/** Modal's sentinel `ttl_seconds` for an image that never expires. */
export const NO_EXPIRY_TTL_SECONDS = -1;

/** Largest page `ImageListTags` answers (Modal rejects more). */
export const MAX_LIST_TAGS_PAGE = 100;

/** One image a sandbox can be created from that the emulator made itself (a filesystem snapshot). */
export interface SnapshotImageRecord {
  /** The Docker image (a repository tag the emulator owns) that sandboxes created from this image run. */
  readonly dockerImage: string;
  /** When the image stops being usable (epoch ms); undefined: never (ttl -1). */
  readonly expiresAtMs: number | undefined;
  /** The sandbox it was taken of. */
  readonly sourceSandboxId: string;
}

/** One named image: `name:tag` in an environment, pointing at an image id. */
export interface NamedImageRecord {
  readonly environmentName: string;
  readonly tag: string;
  readonly imageId: string;
  readonly revisionId: string;
  readonly createdAt: number;
  readonly updatedAt: number;
}

/** What the image store keeps, in `EmulatorState`. */
export interface ImageStoreState {
  /** Image id → its Docker image, for images made by `TaskSnapshotFilesystem`. */
  readonly snapshotImages: Map<string, SnapshotImageRecord>;
  /** `environment/name:tag` → the named image. */
  readonly namedImages: Map<string, NamedImageRecord>;
  /** `TaskSnapshotFilesystem`'s idempotency key (`snapshot_id`) → the image id it made (or is making). */
  readonly snapshotRequests: Map<string, Promise<string>>;
  /** Docker images of deleted snapshot images still used by a container, removed once it is gone. */
  readonly dockerImagesToRemove: Set<string>;
}

/** An empty store. */
export function createImageStore(): ImageStoreState {
  return { snapshotImages: new Map(), namedImages: new Map(), snapshotRequests: new Map(), dockerImagesToRemove: new Set() };
}

/** The Docker repository the emulator instance's snapshot images are tagged in. */
export function snapshotRepository(instanceId: string): string {
  return `modal-emulator-snapshot-${instanceId}`;
}

/** The snapshot image `imageId` still usable, or undefined (unknown, deleted or expired). */
export function usableSnapshotImage(state: EmulatorState, imageId: string): SnapshotImageRecord | undefined {
  const record = state.imageStore.snapshotImages.get(imageId);
  if (!record) return undefined;
  if (record.expiresAtMs !== undefined && Date.now() >= record.expiresAtMs) {
    forgetSnapshotImage(state, imageId);
    return undefined;
  }
  return record;
}

/** `ENV` value quoted for a Dockerfile instruction (`docker import --change`). */
function quoted(value: string): string {
  return `"${value.replace(/[\\"$]/g, (character) => `\\${character}`)}"`;
}

/** The `--change` instructions that give an imported image the base image's own `Env`, `User` and `WorkingDir`. */
function baseImageChanges(base: Docker.ImageInspectInfo, instanceId: string): string[] {
  const changes = [`LABEL ${EMULATOR_LABEL}=1`, `LABEL ${EMULATOR_INSTANCE_LABEL}=${instanceId}`];
  for (const entry of base.Config.Env ?? []) {
    const equals = entry.indexOf("=");
    if (equals > 0) changes.push(`ENV ${entry.slice(0, equals)}=${quoted(entry.slice(equals + 1))}`);
  }
  if (base.Config.User) changes.push(`USER ${base.Config.User}`);
  if (base.Config.WorkingDir) changes.push(`WORKDIR ${base.Config.WorkingDir}`);
  return changes;
}

/** Waits for an import's progress stream to end; rejects with the engine's error message, if any. */
function importFinished(docker: Docker, progress: Readable): Promise<void> {
  return new Promise((resolve, reject) => {
    docker.modem.followProgress(progress, (error: Error | null, events: Array<{ error?: string }>) => {
      if (error) return reject(error);
      const failed = events.find((event) => event.error);
      if (failed) return reject(new Error(failed.error));
      resolve();
    });
  });
}

/**
 * Makes an image of the sandbox's root filesystem (files only): `docker export` streamed into `docker import`, with
 * the base image's config. Returns the new image id (`im-…`).
 */
async function snapshotFilesystem(state: EmulatorState, sandbox: EmulatedSandbox, ttlSeconds: number): Promise<string> {
  const imageId = `im-emusnap${randomBytes(10).toString("hex")}`;
  const dockerImage = `${snapshotRepository(state.instanceId)}:${imageId.toLowerCase()}`;
  const inspect = await sandbox.container.inspect();
  const base = await state.docker.getImage(inspect.Image).inspect();
  const exported = (await sandbox.container.export()) as unknown as Readable;
  const [repo, tag] = dockerImage.split(":") as [string, string];
  const progress = (await state.docker.importImage(exported as never, { repo, tag, changes: baseImageChanges(base, state.instanceId) })) as Readable;
  await importFinished(state.docker, progress);
  state.imageStore.snapshotImages.set(imageId, {
    dockerImage,
    expiresAtMs: ttlSeconds === NO_EXPIRY_TTL_SECONDS ? undefined : Date.now() + ttlSeconds * 1000,
    sourceSandboxId: sandbox.id,
  });
  state.images.set(imageId, { tag: undefined, commands: [], dockerImage });
  return imageId;
}

/** `TaskSnapshotFilesystem`: a filesystem image of the task's sandbox; retried requests with one `snapshot_id` make one image. */
export async function taskSnapshotFilesystem(state: EmulatorState, sandbox: EmulatedSandbox, request: Message): Promise<Message> {
  if (request.containerId) throw new ServerError(Status.INVALID_ARGUMENT, "the modal emulator has no sidecar containers");
  const ttlSeconds = request.ttlSeconds;
  if (typeof ttlSeconds !== "number" || (ttlSeconds !== NO_EXPIRY_TTL_SECONDS && ttlSeconds <= 0))
    throw new ServerError(Status.INVALID_ARGUMENT, "ttl_seconds must be set: a positive number of seconds, or -1 for no expiry");
  const key = String(request.snapshotId ?? "");
  if (!key) throw new ServerError(Status.INVALID_ARGUMENT, "snapshot_id must be set");
  let made = state.imageStore.snapshotRequests.get(key);
  if (!made) {
    made = snapshotFilesystem(state, sandbox, ttlSeconds);
    state.imageStore.snapshotRequests.set(key, made);
    made.catch(() => state.imageStore.snapshotRequests.delete(key));
  }
  try {
    return { imageId: await made };
  } catch (error) {
    throw new ServerError(Status.INTERNAL, `snapshot of sandbox ${sandbox.id} failed: ${error instanceof Error ? error.message : String(error)}`);
  }
}

/**
 * An image reference `[environment/]name[:tag]` as Modal reads it: the tag defaults to `latest`, the environment to
 * `environmentName` (a workspace prefix is refused: the emulator has one workspace).
 */
function parseReference(reference: string, environmentName: string | undefined): { environmentName: string; tag: string } {
  const match = /^(?:([A-Za-z0-9][A-Za-z0-9._-]*)\/)?([A-Za-z0-9][A-Za-z0-9._-]*(?::[A-Za-z0-9][A-Za-z0-9._-]*)?)$/.exec(reference);
  if (!match) throw new ServerError(Status.INVALID_ARGUMENT, `Invalid image name ${JSON.stringify(reference)}`);
  const name = match[2]!;
  return { environmentName: match[1] ?? environmentName ?? "", tag: name.includes(":") ? name : `${name}:latest` };
}

function nameKey(reference: { environmentName: string; tag: string }): string {
  return `${reference.environmentName}/${reference.tag}`;
}

/** Whether `imageId` names an image a sandbox can be created from. */
function imageExists(state: EmulatorState, imageId: string): boolean {
  if (state.imageStore.snapshotImages.has(imageId)) return usableSnapshotImage(state, imageId) !== undefined;
  return state.images.has(imageId);
}

/** Drops a snapshot image: no longer usable; its Docker image removed now, or once no container runs from it. */
function forgetSnapshotImage(state: EmulatorState, imageId: string): void {
  const record = state.imageStore.snapshotImages.get(imageId);
  state.imageStore.snapshotImages.delete(imageId);
  state.images.delete(imageId);
  if (record) state.imageStore.dockerImagesToRemove.add(record.dockerImage);
  void removeUnusedDockerImages(state);
}

/** Removes the Docker images of deleted snapshot images that no container uses any more (the rest wait for the next call). */
export async function removeUnusedDockerImages(state: EmulatorState): Promise<void> {
  for (const dockerImage of [...state.imageStore.dockerImagesToRemove]) {
    try {
      await state.docker.getImage(dockerImage).remove();
      state.imageStore.dockerImagesToRemove.delete(dockerImage);
    } catch (error) {
      // 404: already gone. 409: a container still runs from it.
      if ((error as { statusCode?: number }).statusCode === 404) state.imageStore.dockerImagesToRemove.delete(dockerImage);
    }
  }
}

/** Removes every snapshot image of this emulator instance (at stop). */
export async function removeSnapshotImages(state: EmulatorState): Promise<void> {
  const images = await state.docker.listImages({ filters: JSON.stringify({ label: [`${EMULATOR_INSTANCE_LABEL}=${state.instanceId}`] }) });
  await Promise.all(
    images.map((image) =>
      state.docker
        .getImage(image.Id)
        .remove({ force: true })
        .catch(() => undefined),
    ),
  );
  state.imageStore.dockerImagesToRemove.clear();
}

/** The control-plane handlers of named images and image deletion. `authorize` checks the caller's credentials. */
export function imageStoreHandlers(
  state: EmulatorState,
  authorize: (context: unknown) => void,
): Record<string, (request: Message, context: unknown) => Promise<Message>> {
  const store = state.imageStore;
  return {
    async imagePublish(request, context) {
      authorize(context);
      const reference = parseReference(String(request.tag ?? ""), request.environmentName);
      if (!imageExists(state, request.imageId)) throw new ServerError(Status.NOT_FOUND, `Could not find image with ID ${request.imageId}`);
      const key = nameKey(reference);
      const now = Date.now() / 1000;
      const existing = store.namedImages.get(key);
      store.namedImages.set(key, {
        ...reference,
        imageId: request.imageId,
        revisionId: `ir-emu${randomBytes(8).toString("hex")}`,
        createdAt: existing?.createdAt ?? now,
        updatedAt: now,
      });
      return {};
    },

    async imageGetByTag(request, context) {
      authorize(context);
      const reference = parseReference(String(request.tag ?? ""), request.environmentName);
      const named = store.namedImages.get(nameKey(reference));
      if (!named || !imageExists(state, named.imageId)) throw new ServerError(Status.NOT_FOUND, `Image ${reference.tag} not found`);
      return { imageId: named.imageId };
    },

    async imageListTags(request, context) {
      authorize(context);
      const maxObjects = Number(request.maxObjects || MAX_LIST_TAGS_PAGE);
      if (maxObjects > MAX_LIST_TAGS_PAGE) throw new ServerError(Status.INVALID_ARGUMENT, `max_objects must be at most ${MAX_LIST_TAGS_PAGE}`);
      const offset = request.pageToken ? Number(request.pageToken) : 0;
      if (!Number.isInteger(offset) || offset < 0) throw new ServerError(Status.INVALID_ARGUMENT, "invalid page_token");
      const environmentName = request.environmentName ?? "";
      const matching = [...store.namedImages.values()]
        .filter(
          (named) =>
            named.environmentName === environmentName &&
            named.tag.startsWith(request.tagPrefix ?? "") &&
            (!request.imageId || named.imageId === request.imageId),
        )
        .sort((left, right) => left.createdAt - right.createdAt || left.tag.localeCompare(right.tag));
      const page = matching.slice(offset, offset + maxObjects);
      return {
        items: page.map(({ tag, imageId, revisionId, createdAt, updatedAt }) => ({ tag, imageId, revisionId, createdAt, updatedAt })),
        nextPageToken: offset + maxObjects < matching.length ? String(offset + maxObjects) : "",
        environmentName,
      };
    },

    async imageNameDelete(request, context) {
      authorize(context);
      const reference = parseReference(String(request.tag ?? ""), undefined);
      if (!store.namedImages.delete(nameKey(reference))) throw new ServerError(Status.NOT_FOUND, `Image ${reference.tag} not found`);
      return {};
    },

    async imageDelete(request, context) {
      authorize(context);
      const imageId = String(request.imageId ?? "");
      if (!imageExists(state, imageId)) throw new ServerError(Status.NOT_FOUND, `Could not find image with ID ${imageId}`);
      if (store.snapshotImages.has(imageId)) forgetSnapshotImage(state, imageId);
      else state.images.delete(imageId);
      return {};
    },
  };
}
