import { processIsAlive } from "@sbx/core/adapter";
import { hostname } from "node:os";
import type Docker from "dockerode";
import { EXPIRES_AT_LABEL, MANAGED_LABEL, OWNER_HOST_LABEL, OWNER_PID_LABEL, POLICY_LABEL } from "./labels.js";
import { readPolicyLabel } from "./policy-label.js";
import { createDockerClient } from "./docker-client.js";
import { sweepEgressDirectories } from "./egress/egress-socket.js";
import { parseDockerSettings, resolveEndpoint } from "./docker-settings.js";

/** What a sweep removed. */
export interface SweepResult {
  /** Ids of removed containers. */
  readonly containers: string[];
  /** Names of removed volumes. */
  readonly volumes: string[];
  /** Egress socket directories (adr/0027) of sbx processes on this host that are gone. */
  readonly egressDirectories: string[];
}

/** Whose sandbox a label set names, as far as this host can tell: its owner here and alive, here and gone, or elsewhere. */
type Owner = { readonly state: "alive" | "elsewhere" } | { readonly state: "gone"; readonly pid: number };

/** The owner process a container's or volume's labels name, judged on this host (a pid is only checked on its own host). */
function ownerOf(labels: Record<string, string>, thisHost: string): Owner {
  const pid = Number(labels[OWNER_PID_LABEL]);
  if (labels[OWNER_HOST_LABEL] !== thisHost || !Number.isInteger(pid) || pid <= 0) return { state: "elsewhere" };
  return processIsAlive(pid) ? { state: "alive" } : { state: "gone", pid };
}

/** Whether the container was made to outlive its host process (`keepAfterHostExit`: its policy label says `endsWithHost: false`). */
function keptAfterHostExit(labels: Record<string, string>): boolean {
  try {
    return readPolicyLabel(labels[POLICY_LABEL]).endsWithHost === false;
  } catch {
    return false;
  }
}

/**
 * Why a labelled container is an orphan, or undefined when it must stay (ADR 0059):
 * - not running (an engine restart left it stopped): an orphan;
 * - its owner on this host is gone: an orphan, unless it was created with `keepAfterHostExit`, which promises it lives
 *   until its lifetime ends so another process can `connectSandbox` to it (before, any sweep on the host, such as
 *   another process's create, removed it the moment its creator exited);
 * - past its `sbx.expires-at` label: an orphan, unless its owner lives on this host (`setLifetime` may have moved the
 *   end after the label was written, ADR 0050; that owner's timers and the container's root deadline enforce it).
 */
export function orphanReason(labels: Record<string, string>, state: string, now = Date.now(), thisHost = hostname()): string | undefined {
  if (state !== "running" && state !== "created" && state !== "restarting") return `not running (${state})`;
  const owner = ownerOf(labels, thisHost);
  if (owner.state === "gone" && !keptAfterHostExit(labels)) return `owner process ${owner.pid} is gone`;
  const expiresAt = Date.parse(labels[EXPIRES_AT_LABEL] ?? "");
  if (!Number.isNaN(expiresAt) && expiresAt <= now && owner.state !== "alive") return "lifetime expired";
  return undefined;
}

/**
 * Why a labelled volume no container uses may be removed, or undefined when it must stay: only when its owner is
 * known gone (same host, pid not alive) or its sandbox's lifetime ended. A dangling volume of a live owner may be
 * one whose container is being created right now (the engine makes the volume first); another host's volume is
 * judged by that host's sweep (or its expiry); a volume without owner labels (made by sbx before adr/0032) is left.
 */
export function volumeOrphanReason(labels: Record<string, string>, now = Date.now(), thisHost = hostname()): string | undefined {
  const expiresAt = Date.parse(labels[EXPIRES_AT_LABEL] ?? "");
  if (!Number.isNaN(expiresAt) && expiresAt <= now) return "lifetime expired";
  const owner = ownerOf(labels, thisHost);
  if (owner.state === "gone") return `owner process ${owner.pid} is gone`;
  return undefined;
}

/**
 * Removes sbx sandbox containers whose owner process is gone (same host, pid not alive; not for a `keepAfterHostExit`
 * sandbox, which stays until its lifetime ended), whose lifetime expired, or that are no longer running, plus labelled volumes no container uses whose owner is gone or whose
 * lifetime ended (`volumeOrphanReason`). Never touches a live sandbox of a live owner, a volume a live process may be
 * creating a sandbox with, another host's volume before its expiry, nor anything without the `sbx.managed` label.
 * Also removes the egress socket directories of sbx processes on this host that are gone.
 */
export async function sweepOrphans(options: { docker?: Docker; signal?: AbortSignal } = {}): Promise<SweepResult> {
  const docker = options.docker ?? createDockerClient(resolveEndpoint(parseDockerSettings({})));
  const removedContainers: string[] = [];
  const containers = await docker.listContainers({
    all: true,
    filters: { label: [`${MANAGED_LABEL}=1`] },
    abortSignal: options.signal,
  } as Docker.ContainerListOptions);
  await Promise.all(
    containers.map(async (info) => {
      if (!orphanReason(info.Labels ?? {}, info.State)) return;
      try {
        await docker.getContainer(info.Id).remove({ force: true, v: true });
        removedContainers.push(info.Id);
      } catch (error) {
        if ((error as { statusCode?: number }).statusCode === 404) removedContainers.push(info.Id);
        // 409: removal already in progress (AutoRemove); it goes away by itself.
      }
    }),
  );
  const removedVolumes: string[] = [];
  // eslint-disable-next-line @typescript-eslint/await-thenable -- dockerode's types only know the callback overload here; without a callback it returns a promise
  const volumes = (await docker.listVolumes({
    filters: { label: [`${MANAGED_LABEL}=1`], dangling: ["true"] },
    abortSignal: options.signal,
  } as never)) as unknown as { Volumes?: Array<{ Name: string; Labels?: Record<string, string> | null }> };
  await Promise.all(
    (volumes.Volumes ?? []).map(async (volume) => {
      if (!volumeOrphanReason(volume.Labels ?? {})) return;
      try {
        await docker.getVolume(volume.Name).remove();
        removedVolumes.push(volume.Name);
      } catch {
        // In use by a live sandbox, or already gone.
      }
    }),
  );
  return { containers: removedContainers, volumes: removedVolumes, egressDirectories: sweepEgressDirectories() };
}
