import { InvalidArgumentError } from "@sbx/core";
import type { DriverAudit } from "@sbx/core/adapter";
import type Docker from "dockerode";
import type { ResolvedDockerSettings } from "./docker-settings.js";
import { SNAPSHOT_ARCHIVE_PATH } from "./snapshot-labels.js";
import { resolveSnapshotImage } from "./snapshot-store.js";

/** The snapshot a create starts from: its id (the image tag the container is created from) and the image's id. */
export interface SnapshotForCreate {
  readonly id: string;
  readonly imageId: string;
}

/**
 * Checks `options.fromSnapshot` before anything is created (ADR 0056): a Docker snapshot id of an sbx snapshot on
 * this engine, taken of the same workspace path. A target naming an image as well is refused: the snapshot's image
 * is the sandbox's image.
 */
export async function snapshotForCreate(docker: Docker, id: string, target: string, settings: ResolvedDockerSettings): Promise<SnapshotForCreate> {
  if (target.length > 0)
    throw new InvalidArgumentError({
      field: "target",
      backend: "docker",
      message: `Invalid target: "docker://${target}" names an image, and options.fromSnapshot names the snapshot whose image the sandbox starts from; pass "docker://" with fromSnapshot.`,
    });
  const { imageId } = await resolveSnapshotImage(docker, id, settings.workspace);
  return { id, imageId };
}

/**
 * The audit record of a sandbox made from a snapshot: `policies.snapshot` says which snapshot, what was restored and
 * that nothing else was taken from it (every other policy is this create's, recorded beside it).
 */
export function withSnapshotRecord(audit: DriverAudit, snapshot: SnapshotForCreate | undefined): DriverAudit {
  if (!snapshot) return audit;
  return {
    ...audit,
    policies: {
      ...audit.policies,
      snapshot: {
        requested: { fromSnapshot: snapshot.id },
        applied: { image: snapshot.id, imageId: snapshot.imageId, restored: "workspace" },
        enforcement: `files only: the workspace was extracted from the snapshot's ${SNAPSHOT_ARCHIVE_PATH} by the sandbox's own user at create; network, limits, user, lifetime, mounts, environment, secrets and labels are this create's own (the snapshot holds none of them).`,
      },
    },
  };
}
