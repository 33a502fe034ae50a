import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ProviderError, type SandboxSnapshot } from "@sbx/core";
import type Docker from "dockerode";
import { singleFileArchive } from "./outer-archive.js";
import {
  newSnapshotId,
  SNAPSHOT_ARCHIVE_DIRECTORY,
  SNAPSHOT_ARCHIVE_NAME,
  SNAPSHOT_BASE_IMAGE_LABEL,
  SNAPSHOT_REPOSITORY,
  snapshotLabels,
} from "./snapshot-labels.js";
import { archiveWorkspace } from "./workspace-archive.js";

/** Headroom over the workspace's size the archive may take (tar headers, one 512-byte block per member at least). */
const ARCHIVE_HEADROOM_BYTES = 64 * 1024 * 1024;

/** POST /commit with the options in the query only: the body is empty, so the image's config is the build container's. */
function commitContainer(docker: Docker, query: Record<string, string | boolean>, signal?: AbortSignal): Promise<{ Id: string }> {
  return new Promise((resolve, reject) => {
    docker.modem.dial(
      {
        path: "/commit?",
        method: "POST",
        options: { _query: query, _body: {} },
        abortSignal: signal,
        statusCodes: { 200: true, 201: true, 404: "no such container", 500: "server error" },
      } as never,
      // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors -- the engine's error, passed on unchanged
      (error: unknown, data: unknown) => (error ? reject(error) : resolve(data as { Id: string })),
    );
  });
}

/**
 * Takes a Docker snapshot of a sandbox (ADR 0056). `docker commit` of the sandbox's own container would record its
 * config (environment, labels with the owner, policy, session and expiry, the deadline entrypoint) and leave out the
 * workspace (a volume), so the sandbox's container is never committed. Instead:
 * 1. the workspace is archived from inside, as the sandbox user (`archiveWorkspace`), into a private temporary file;
 * 2. a build container is created (never started) from the sandbox's base image with only the snapshot's labels and no
 *    other setting, so its config is the base image's own;
 * 3. the archive is put into it as `/.sbx-snapshot/workspace.tar` (one file, mode 0444), and the build container is
 *    committed as `sbx-snapshot:<random>` with an empty config body, then removed.
 * The image is the base image plus one layer holding that one file. The root filesystem is read-only and `/tmp` a
 * tmpfs inside the container's namespace, so the workspace is the sandbox's only lasting writable filesystem. Running
 * processes and memory are not part of it.
 */
export async function takeSnapshot(options: {
  readonly docker: Docker;
  readonly container: Docker.Container;
  readonly user: string;
  readonly workspace: string;
  readonly workspaceSizeMiB: number;
  readonly signal?: AbortSignal;
}): Promise<SandboxSnapshot> {
  const { docker, container, signal } = options;
  const inspect = await container.inspect();
  // A sandbox made from a snapshot is snapshotted onto the original base image, so archives never stack up.
  const imageLabels = (await docker.getImage(inspect.Image).inspect()).Config?.Labels ?? {};
  const baseImage = imageLabels[SNAPSHOT_BASE_IMAGE_LABEL] ?? inspect.Image;
  const directory = await mkdtemp(join(tmpdir(), "sbx-snapshot-"));
  const archive = join(directory, SNAPSHOT_ARCHIVE_NAME);
  let build: Docker.Container | undefined;
  const id = newSnapshotId();
  let committed = false;
  try {
    const { sizeBytes } = await archiveWorkspace(container, {
      user: options.user,
      workspace: options.workspace,
      file: archive,
      maxBytes: options.workspaceSizeMiB * 1024 * 1024 + ARCHIVE_HEADROOM_BYTES,
      signal,
    });
    const createdAt = new Date().toISOString();
    const labels = snapshotLabels({ id, workspace: options.workspace, baseImage, createdAt, sizeBytes });
    build = await docker.createContainer({ Image: baseImage, Labels: labels, NetworkDisabled: true, HostConfig: { NetworkMode: "none" } });
    await build.putArchive(singleFileArchive({ directory: SNAPSHOT_ARCHIVE_DIRECTORY, name: SNAPSHOT_ARCHIVE_NAME, source: archive, sizeBytes }), {
      path: "/",
    });
    if (signal?.aborted) throw new ProviderError({ backend: "docker", message: "The snapshot was aborted before its image was committed." });
    const tag = id.slice(SNAPSHOT_REPOSITORY.length + 1);
    await commitContainer(docker, { container: build.id, repo: SNAPSHOT_REPOSITORY, tag, comment: "sbx snapshot (workspace archive)", pause: false });
    committed = true;
    if (signal?.aborted) throw new ProviderError({ backend: "docker", message: "The snapshot was aborted; its image was removed." });
    return { id, createdAt, backend: "docker", sizeBytes };
  } catch (error) {
    if (committed)
      await docker
        .getImage(id)
        .remove()
        .catch(() => {});
    throw error;
  } finally {
    await build?.remove({ force: true }).catch(() => {});
    await rm(directory, { recursive: true, force: true });
  }
}
