import { processIsAlive } from "@sbx/core/adapter";
import { runCli, type ContainerCli } from "./container-cli.js";
import { parseContainers } from "./container-output.js";
import { EXPIRES_LABEL, MANAGED_LABEL, OWNER_PID_LABEL } from "./container-run-plan.js";

/** What a sweep removed. */
export interface SweepResult {
  readonly removed: string[];
}

/**
 * Deletes the sbx containers a crashed host process left behind: every container labelled `dev.sbx.managed=true`
 * whose `dev.sbx.expires-at` has passed, or whose creating process (`dev.sbx.owner.pid`, the same Mac: the service is
 * per user) is dead (nothing can reach it again: the adapter has no `connect`). The CLI has no label filter, so the
 * list (`ls --all --format json`) is filtered here. A container whose owner is alive and whose lifetime has not ended
 * is never touched, even when it is listed as stopped: a container being created right now is listed so between its
 * creation and its start (the contract run lost a sandbox to a concurrent sweep that way), and a stopped one of a
 * live owner is deleted by `--rm` or its owner anyway. Never throws: a failed sweep is retried at the next create.
 */
export async function sweepOrphans(options: { cli: ContainerCli; timeoutMs: number; now?: number; signal?: AbortSignal }): Promise<SweepResult> {
  const now = options.now ?? Date.now();
  const listed = await runCli(options.cli, ["ls", "--all", "--format", "json"], { timeoutMs: options.timeoutMs, signal: options.signal });
  if (listed.exitCode !== 0) return { removed: [] };
  const orphans = (parseContainers(listed.stdout) ?? []).filter((record) => {
    if (record.labels[MANAGED_LABEL] !== "true") return false;
    const expiresAt = Number(record.labels[EXPIRES_LABEL]);
    const owner = Number(record.labels[OWNER_PID_LABEL]);
    if (Number.isFinite(expiresAt) && expiresAt <= now) return true;
    return Number.isInteger(owner) && owner > 0 && owner !== process.pid && !processIsAlive(owner);
  });
  if (orphans.length === 0) return { removed: [] };
  const ids = orphans.map((record) => record.id);
  await runCli(options.cli, ["delete", "--force", ...ids], { timeoutMs: options.timeoutMs, signal: options.signal });
  return { removed: ids };
}
