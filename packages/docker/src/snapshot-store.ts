import { InvalidArgumentError, type SandboxSnapshot } from "@sbx/core";
import type Docker from "dockerode";
import { engineMessage, statusCodeOf } from "./map-docker-error.js";
import { SNAPSHOT_CREATED_AT_LABEL, SNAPSHOT_ID_PATTERN, SNAPSHOT_LABEL, SNAPSHOT_SIZE_LABEL, SNAPSHOT_WORKSPACE_LABEL } from "./snapshot-labels.js";

/** Refuses an id that is not a Docker snapshot id (`sbx-snapshot:<32 hex>`): nothing else is ever read or deleted as one. */
function requireSnapshotId(id: string, field: string): void {
  if (!SNAPSHOT_ID_PATTERN.test(id))
    throw new InvalidArgumentError({
      field,
      backend: "docker",
      message: `Invalid ${field}: ${JSON.stringify(id)} is not a Docker snapshot id (sbx-snapshot:<32 hex digits>, from sandbox.snapshot() or listSnapshots()).`,
    });
}

/** The snapshot's size label as a number, or undefined when absent or malformed. */
function sizeOf(labels: Readonly<Record<string, string>>): number | undefined {
  const size = Number(labels[SNAPSHOT_SIZE_LABEL]);
  return Number.isSafeInteger(size) && size >= 0 ? size : undefined;
}

/** The snapshot images on the engine (label `sbx.snapshot=1`, tagged `sbx-snapshot:<hex>`), one entry per tag. */
export async function listDockerSnapshots(docker: Docker): Promise<SandboxSnapshot[]> {
  const images = await docker.listImages({ filters: { label: [`${SNAPSHOT_LABEL}=1`] } });
  const snapshots: SandboxSnapshot[] = [];
  for (const image of images) {
    const labels = image.Labels ?? {};
    for (const tag of image.RepoTags ?? []) {
      if (!SNAPSHOT_ID_PATTERN.test(tag)) continue;
      const createdAt = labels[SNAPSHOT_CREATED_AT_LABEL] ?? new Date(image.Created * 1000).toISOString();
      const sizeBytes = sizeOf(labels);
      snapshots.push({ id: tag, createdAt, backend: "docker", ...(sizeBytes === undefined ? {} : { sizeBytes }) });
    }
  }
  return snapshots;
}

/**
 * The snapshot image `id` for a create (`options.fromSnapshot`): refused (`InvalidArgumentError` on
 * `options.fromSnapshot`) when the id is malformed, the engine has no such image, it is not an sbx snapshot, or it
 * was taken of another workspace path than the new sandbox's. Never pulled: a snapshot exists on its engine only.
 */
export async function resolveSnapshotImage(docker: Docker, id: string, workspace: string): Promise<{ imageId: string }> {
  const field = "options.fromSnapshot";
  requireSnapshotId(id, field);
  let inspect: Docker.ImageInspectInfo;
  try {
    inspect = await docker.getImage(id).inspect();
  } catch (error) {
    if (statusCodeOf(error) === 404)
      throw new InvalidArgumentError({
        field,
        backend: "docker",
        message: `Invalid ${field}: this Docker Engine has no snapshot ${id} (deleted, or taken on another engine).`,
      });
    throw error;
  }
  const labels = inspect.Config?.Labels ?? {};
  if (labels[SNAPSHOT_LABEL] !== "1")
    throw new InvalidArgumentError({
      field,
      backend: "docker",
      message: `Invalid ${field}: the image ${id} is not an sbx snapshot (it lacks the ${SNAPSHOT_LABEL} label).`,
    });
  if (labels[SNAPSHOT_WORKSPACE_LABEL] !== workspace)
    throw new InvalidArgumentError({
      field,
      backend: "docker",
      message: `Invalid ${field}: snapshot ${id} holds the workspace ${JSON.stringify(labels[SNAPSHOT_WORKSPACE_LABEL])}, and this sandbox's workspace is ${JSON.stringify(workspace)}; create it with settings.workspace equal to the snapshot's.`,
    });
  return { imageId: inspect.Id };
}

/**
 * Deletes the snapshot image tagged `id` (never forced): `true` when removed, `false` when the engine has no such
 * tag. Refuses an id that is not `sbx-snapshot:<hex>` or an image without the `sbx.snapshot` label, and an image a
 * container still uses (a sandbox created from it runs: `InvalidArgumentError`, kill it first).
 */
export async function deleteDockerSnapshot(docker: Docker, id: string): Promise<boolean> {
  requireSnapshotId(id, "id");
  const image = docker.getImage(id);
  let labels: Record<string, string>;
  try {
    labels = (await image.inspect()).Config?.Labels ?? {};
  } catch (error) {
    if (statusCodeOf(error) === 404) return false;
    throw error;
  }
  if (labels[SNAPSHOT_LABEL] !== "1")
    throw new InvalidArgumentError({
      field: "id",
      backend: "docker",
      message: `Invalid id: the image ${id} is not an sbx snapshot; refusing to delete it.`,
    });
  try {
    await image.remove({ force: false, noprune: false });
    return true;
  } catch (error) {
    if (statusCodeOf(error) === 404) return false;
    if (statusCodeOf(error) === 409)
      throw new InvalidArgumentError({
        field: "id",
        backend: "docker",
        message: `Snapshot ${id} is still used by a container (a sandbox created from it is running): kill those sandboxes, then delete it. Engine: ${engineMessage(error)}`,
      });
    throw error;
  }
}
