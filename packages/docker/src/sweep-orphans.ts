import { processIsAlive } from "@sbx/core/adapter";
import { hostname } from "node:os";
import type Docker from "dockerode";
import { EXPIRES_AT_LABEL, MANAGED_LABEL, OWNER_HOST_LABEL, OWNER_PID_LABEL } from "./labels.js";
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

/**
 * Why a labelled container is an orphan, or undefined when it must stay: a running container of a live owner on this
 * host stays even past its `sbx.expires-at` label, because `setLifetime` may have moved its end after the label was
 * written (labels are fixed at create, ADR 0050) and that owner's own timers and the container's root deadline enforce
 * the current end. Past the label, a container whose owner is gone or on another host is an orphan.
 */
export function orphanReason(labels: Record<string, string>, state: string, now = Date.now(), thisHost = hostname()): string | undefined {
  if (state !== "running" && state !== "created" && state !== "restarting") return `not running (${state})`;
  const pid = Number(labels[OWNER_PID_LABEL]);
  const ownerHere = labels[OWNER_HOST_LABEL] === thisHost && Number.isInteger(pid) && pid > 0;
  if (ownerHere && !processIsAlive(pid)) return `owner process ${pid} is gone`;
  const expiresAt = Date.parse(labels[EXPIRES_AT_LABEL] ?? "");
  if (!Number.isNaN(expiresAt) && expiresAt <= now && !ownerHere) return "lifetime expired";
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
  const pid = Number(labels[OWNER_PID_LABEL]);
  if (labels[OWNER_HOST_LABEL] === thisHost && Number.isInteger(pid) && pid > 0 && !processIsAlive(pid)) return `owner process ${pid} is gone`;
  return undefined;
}

/**
 * Removes sbx sandbox containers whose owner process is gone (same host, pid not alive), whose lifetime
 * expired, or that are no longer running, plus labelled volumes no container uses whose owner is gone or whose
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
