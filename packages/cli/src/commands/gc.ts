import { listSandboxes, sweepOrphans } from "@sbx/docker";
import type { CliEnvironment, OutputMode } from "../terminal.js";

/** Flags of `sbx gc`. */
export interface GcFlags {
  "dry-run"?: boolean;
}

/**
 * `sbx gc [--dry-run]`: removes orphaned Docker sandboxes (owner process gone, lifetime expired, or stopped) and the
 * labelled volumes no container uses. Never touches a live sandbox of a live owner, nor anything sbx did not label.
 * `--dry-run` lists what would go. Docker only.
 */
export async function gcCommand(environment: CliEnvironment, mode: OutputMode, flags: GcFlags): Promise<number> {
  if (flags["dry-run"] === true) {
    const orphans = (await listSandboxes({ signal: environment.signal })).filter((sandbox) => sandbox.orphanReason !== null);
    if (mode.json)
      environment.stdout.write(
        `${JSON.stringify({ backend: "docker", dryRun: true, containers: orphans.map((orphan) => ({ id: orphan.id, reason: orphan.orphanReason })) }, null, 2)}\n`,
      );
    else if (orphans.length === 0) environment.stdout.write("Nothing to remove.\n");
    else for (const orphan of orphans) environment.stdout.write(`would remove ${orphan.id.slice(0, 12)} (${orphan.orphanReason})\n`);
    return 0;
  }
  const result = await sweepOrphans({ signal: environment.signal });
  if (mode.json) environment.stdout.write(`${JSON.stringify({ backend: "docker", dryRun: false, ...result }, null, 2)}\n`);
  else {
    for (const id of result.containers) environment.stdout.write(`removed container ${id.slice(0, 12)}\n`);
    for (const name of result.volumes) environment.stdout.write(`removed volume ${name}\n`);
    if (!mode.quiet) environment.stdout.write(`Removed ${result.containers.length} container(s) and ${result.volumes.length} volume(s).\n`);
  }
  return 0;
}
