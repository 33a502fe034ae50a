import { listSandboxes } from "@sbx/docker";
import type { CliEnvironment, OutputMode } from "../terminal.js";
import { table } from "../terminal.js";

/** Flags of `sbx ls`. */
export interface ListFlags {
  all?: boolean;
}

function age(from: Date, now: number): string {
  const seconds = Math.max(0, Math.round((now - from.getTime()) / 1000));
  if (seconds < 120) return `${seconds}s`;
  if (seconds < 7200) return `${Math.round(seconds / 60)}m`;
  return `${Math.round(seconds / 3600)}h`;
}

/**
 * `sbx ls [--all]`: the Docker sandboxes sbx created on this engine (containers labelled `sbx.managed`), with
 * owner and expiry, and whether `sbx gc` would remove them. Without `--all`, only this host's. Docker only:
 * E2B sandboxes live in E2B's own dashboard/CLI, the fake's in the process that made them.
 */
export async function listCommand(environment: CliEnvironment, mode: OutputMode, flags: ListFlags): Promise<number> {
  const { hostname } = await import("node:os");
  const thisHost = hostname();
  const sandboxes = (await listSandboxes({ signal: environment.signal })).filter((sandbox) => flags.all === true || sandbox.owner.host === thisHost);
  if (mode.json) {
    environment.stdout.write(`${JSON.stringify({ backend: "docker", sandboxes }, null, 2)}\n`);
    return 0;
  }
  const now = Date.now();
  const rows = sandboxes.map((sandbox) => [
    sandbox.id.slice(0, 12),
    sandbox.image,
    sandbox.state,
    age(sandbox.createdAt, now),
    sandbox.owner.pid === null ? "?" : `${sandbox.owner.pid}@${sandbox.owner.host ?? "?"}`,
    sandbox.orphanReason ?? "-",
  ]);
  if (rows.length === 0) {
    if (!mode.quiet) environment.stdout.write("No sbx sandboxes on the Docker engine.\n");
    return 0;
  }
  environment.stdout.write(table(["ID", "IMAGE", "STATE", "AGE", "OWNER", "ORPHAN"], rows));
  return 0;
}
