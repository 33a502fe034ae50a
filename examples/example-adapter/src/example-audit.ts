import { execFile } from "node:child_process";
import { promisify } from "node:util";
import type { NetworkPolicy } from "@sbx/core";
import type { DriverAudit, ResolvedCreateOptions } from "@sbx/core/adapter";

/** Kept next to a sandbox's workspace, so `connect()` (from any process) restores its policy. */
export interface ExampleSandboxRecord {
  readonly network: NetworkPolicy;
  readonly createdAt: string;
  readonly expiresAt: number;
}

const run = promisify(execFile);
let version: Promise<string> | undefined;

/** The audit record of an example sandbox: what was asked, what was applied and how (honestly: little). */
export async function exampleAudit(record: ExampleSandboxRecord, options: ResolvedCreateOptions): Promise<DriverAudit> {
  version ??= run("unshare", ["--version"]).then(
    ({ stdout }) => stdout.trim(),
    () => "unknown",
  );
  const denyEgress = record.network.egress === "deny";
  const uid = process.getuid?.() ?? "unknown";
  return {
    backendVersion: await version,
    policies: {
      network: {
        requested: options.network,
        applied: { egress: record.network.egress },
        enforcement: denyEgress
          ? "unshare --net per command: a new network namespace with only a loopback interface, down"
          : "host network namespace: unrestricted egress",
      },
      limits: { requested: options.limits ?? null, applied: null, enforcement: "none: RESOURCE_LIMITS is off, host defaults apply" },
      mounts: { requested: options.mounts, applied: [], enforcement: "none: HOST_MOUNTS is off" },
      user: {
        requested: options.user,
        applied: `host uid ${uid}`,
        enforcement: "commands run as the host user of this process: not an isolation boundary",
      },
      lifetime: {
        requested: options.timeoutMs,
        applied: record.expiresAt - Date.parse(record.createdAt),
        enforcement: "a timer in the creating process removes the folder; not enforced if that process dies",
      },
    },
    notes: ["example adapter: not an isolation boundary; the workspace is a host folder and commands share the host filesystem"],
  };
}
