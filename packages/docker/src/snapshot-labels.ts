import { randomBytes } from "node:crypto";

/**
 * The image repository every Docker snapshot is tagged in: a snapshot's id is `sbx-snapshot:<32 hex digits>`, so an id
 * names exactly one image tag sbx made, and `deleteSnapshot` can refuse any other image (ADR 0056).
 */
export const SNAPSHOT_REPOSITORY = "sbx-snapshot";

/** A Docker snapshot id: the repository and a 128-bit random tag. */
export const SNAPSHOT_ID_PATTERN = /^sbx-snapshot:[0-9a-f]{32}$/;

/** Label every snapshot image carries (`"1"`); `listSnapshots` filters on it. */
export const SNAPSHOT_LABEL = "sbx.snapshot";
/** Label with the workspace path the snapshot's archive was taken of; a create from it needs the same workspace. */
export const SNAPSHOT_WORKSPACE_LABEL = "sbx.snapshot.workspace";
/** Label with the id of the image the snapshot was built on (the sandbox's own image, never another snapshot). */
export const SNAPSHOT_BASE_IMAGE_LABEL = "sbx.snapshot.base-image";
/** Label with the ISO time the snapshot was taken. */
export const SNAPSHOT_CREATED_AT_LABEL = "sbx.snapshot.created-at";
/** Label with the bytes of the workspace archive the snapshot's own layer holds. */
export const SNAPSHOT_SIZE_LABEL = "sbx.snapshot.size-bytes";

/**
 * Where the workspace archive lives in a snapshot image: one tar file, readable by every uid, which the new sandbox's
 * own user extracts into its fresh workspace at create (`restore-snapshot.ts`). Outside the workspace, on the image's
 * read-only root.
 */
export const SNAPSHOT_ARCHIVE_DIRECTORY = ".sbx-snapshot";
/** The archive's file name inside `SNAPSHOT_ARCHIVE_DIRECTORY`. */
export const SNAPSHOT_ARCHIVE_NAME = "workspace.tar";
/** The archive's absolute path inside a sandbox made from a snapshot. */
export const SNAPSHOT_ARCHIVE_PATH = `/${SNAPSHOT_ARCHIVE_DIRECTORY}/${SNAPSHOT_ARCHIVE_NAME}`;

/** A new snapshot id. */
export function newSnapshotId(): string {
  return `${SNAPSHOT_REPOSITORY}:${randomBytes(16).toString("hex")}`;
}

/**
 * Every label a snapshot image carries, and nothing else of sbx's: no owner, session, expiry, policy, metadata or
 * audit tag (those are the sandbox's, and each create from the snapshot writes its own).
 */
export function snapshotLabels(options: {
  id: string;
  workspace: string;
  baseImage: string;
  createdAt: string;
  sizeBytes: number;
}): Record<string, string> {
  return {
    [SNAPSHOT_LABEL]: "1",
    [SNAPSHOT_WORKSPACE_LABEL]: options.workspace,
    [SNAPSHOT_BASE_IMAGE_LABEL]: options.baseImage,
    [SNAPSHOT_CREATED_AT_LABEL]: options.createdAt,
    [SNAPSHOT_SIZE_LABEL]: String(options.sizeBytes),
  };
}
