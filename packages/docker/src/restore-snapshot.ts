import { ProviderError } from "@sbx/core";
import { helperEnvironment } from "@sbx/core/adapter";
import type Docker from "dockerode";
import { runArgv } from "./exec-process.js";
import { SNAPSHOT_ARCHIVE_PATH } from "./snapshot-labels.js";

/**
 * Extracts a snapshot's workspace archive (`/.sbx-snapshot/workspace.tar` in the snapshot image) into the new
 * sandbox's fresh workspace, before the sandbox is handed out (ADR 0056). `tar` runs inside the sandbox as the new
 * sandbox's own user: files are that user's (whatever the snapshotted sandbox's user was), modes are kept, and nothing
 * is resolved with more rights than the sandbox's code has (the engine's archive API is not used). The workspace
 * volume's size limit holds: an archive larger than the workspace fails with ENOSPC, and the create fails.
 */
export async function restoreSnapshotWorkspace(
  container: Docker.Container,
  options: { readonly user: string; readonly workspace: string },
): Promise<void> {
  const argv = ["sh", "-c", 'exec tar -xpf "$1" -C "$2"', "sbx-restore", SNAPSHOT_ARCHIVE_PATH, options.workspace];
  const env = Object.entries(helperEnvironment(options.workspace)).map(([name, value]) => `${name}=${value}`);
  const result = await runArgv(container, argv, { user: options.user, env, maxOutputBytes: 64 * 1024 });
  if (result.exitCode !== 0)
    throw new ProviderError({
      backend: "docker",
      message: `Restoring the snapshot's workspace failed (tar exited ${result.exitCode}): ${result.stderr.trim().slice(0, 2048) || "no message"}.`,
    });
}
