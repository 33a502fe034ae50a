import type Docker from "dockerode";
import { createDockerClient } from "./docker-client.js";
import { EXPIRES_AT_LABEL, MANAGED_LABEL, METADATA_LABEL_PREFIX, OWNER_HOST_LABEL, OWNER_PID_LABEL, SESSION_LABEL } from "./labels.js";
import { parseDockerSettings, resolveEndpoint } from "./docker-settings.js";
import { orphanReason } from "./sweep-orphans.js";

/** One sbx sandbox container as `listSandboxes()` reports it. */
export interface ListedSandbox {
  /** Container id (the sandbox id `connectSandbox("docker://", id)` takes). */
  readonly id: string;
  /** Image the sandbox runs. */
  readonly image: string;
  /** Engine state, for example `"running"` or `"exited"`. */
  readonly state: string;
  /** When the container was created. */
  readonly createdAt: Date;
  /** When its lifetime ends (from the `sbx.expires-at` label), or null when unlabelled. */
  readonly expiresAt: Date | null;
  /** Owning process id and host, from the labels. */
  readonly owner: { readonly pid: number | null; readonly host: string | null };
  /** The provider session that created it. */
  readonly session: string | null;
  /** Caller metadata labels (`sbx.metadata.*`), without the prefix. */
  readonly metadata: Readonly<Record<string, string>>;
  /** Why `sweepOrphans()` would remove it, or null when it belongs to a live owner and has not expired. */
  readonly orphanReason: string | null;
}

/** Lists every container carrying the `sbx.managed` label on the engine (Docker only), oldest first. Read-only. */
export async function listSandboxes(options: { docker?: Docker; signal?: AbortSignal } = {}): Promise<ListedSandbox[]> {
  const docker = options.docker ?? createDockerClient(resolveEndpoint(parseDockerSettings({})));
  const containers = await docker.listContainers({
    all: true,
    filters: { label: [`${MANAGED_LABEL}=1`] },
    abortSignal: options.signal,
  } as Docker.ContainerListOptions);
  return containers
    .map((info): ListedSandbox => {
      const labels = info.Labels ?? {};
      const expiresAt = Date.parse(labels[EXPIRES_AT_LABEL] ?? "");
      const pid = Number(labels[OWNER_PID_LABEL]);
      const metadata: Record<string, string> = {};
      for (const [key, value] of Object.entries(labels))
        if (key.startsWith(METADATA_LABEL_PREFIX)) metadata[key.slice(METADATA_LABEL_PREFIX.length)] = value;
      return {
        id: info.Id,
        image: info.Image,
        state: info.State,
        createdAt: new Date(info.Created * 1000),
        expiresAt: Number.isNaN(expiresAt) ? null : new Date(expiresAt),
        owner: { pid: Number.isInteger(pid) && pid > 0 ? pid : null, host: labels[OWNER_HOST_LABEL] ?? null },
        session: labels[SESSION_LABEL] ?? null,
        metadata,
        orphanReason: orphanReason(labels, info.State) ?? null,
      };
    })
    .sort((left, right) => left.createdAt.getTime() - right.createdAt.getTime());
}
