import type { AppleConfiguration } from "./container-configuration.js";
import { docker, LABEL_CONFIGURATION, LABEL_ID, LABEL_NAMESPACE } from "./docker-cli.js";
import type { StandinModes } from "./standin-modes.js";

/** The parts of `docker inspect` the stand-in reads. */
interface DockerInspect {
  readonly Name: string;
  readonly State: { readonly Status: string; readonly Running: boolean; readonly StartedAt: string };
  readonly Config: { readonly Labels: Record<string, string> | null };
  readonly NetworkSettings: {
    readonly Networks: Record<string, { IPAddress: string; IPPrefixLen: number; Gateway: string; MacAddress: string }> | null;
  };
}

/** One stand-in container as the real CLI encodes a `ManagedContainer` (§4.1): `{id, configuration, status}`. */
export interface AppleContainer {
  readonly id: string;
  readonly configuration: AppleConfiguration;
  readonly status: { state: "running" | "stopped" | "stopping" | "unknown"; networks: unknown[]; startedDate?: string };
}

function stateOf(status: string): AppleContainer["status"]["state"] {
  if (status === "running" || status === "paused" || status === "restarting") return "running";
  if (status === "removing") return "stopping";
  if (status === "created" || status === "exited" || status === "dead") return "stopped";
  return "unknown";
}

function toApple(entry: DockerInspect, modes: StandinModes): AppleContainer | undefined {
  const labels = entry.Config.Labels ?? {};
  if (labels[LABEL_NAMESPACE] !== modes.namespace || !labels[LABEL_ID] || !labels[LABEL_CONFIGURATION]) return undefined;
  const configuration = JSON.parse(labels[LABEL_CONFIGURATION]) as AppleConfiguration;
  const state = stateOf(entry.State.Status);
  const networks =
    state === "running"
      ? Object.entries(entry.NetworkSettings.Networks ?? {})
          .filter(([name]) => name !== "none")
          .map(([, network]) => ({
            hostname: configuration.id,
            ipv4Address: `${network.IPAddress}/${network.IPPrefixLen}`,
            ipv4Gateway: network.Gateway,
            macAddress: network.MacAddress,
            network: "default",
            ...(modes.generation === "1.4" || modes.version.startsWith("1.3") ? { mtu: 1500 } : {}),
          }))
      : [];
  // No exit code: the real CLI's inspect of a stopped container carries none (captured on 1.3.1).
  const startedDate = state === "running" ? entry.State.StartedAt.replace(/\.\d+Z$/, "Z") : undefined;
  return { id: labels[LABEL_ID], configuration, status: { networks, state, ...(startedDate ? { startedDate } : {}) } };
}

/** Reads the stand-in containers of this namespace with the given Docker names (missing ones are left out). */
export async function inspectContainers(modes: StandinModes, dockerNames: readonly string[]): Promise<AppleContainer[]> {
  if (dockerNames.length === 0) return [];
  const result = await docker(modes, ["inspect", "--type=container", ...dockerNames]);
  let entries: DockerInspect[];
  try {
    entries = JSON.parse(result.stdout || "[]") as DockerInspect[];
  } catch {
    entries = [];
  }
  return entries.map((entry) => toApple(entry, modes)).filter((entry): entry is AppleContainer => entry !== undefined);
}

/** Every stand-in container of this namespace (all states). */
export async function listContainers(modes: StandinModes): Promise<AppleContainer[]> {
  const names = await docker(modes, ["ps", "-a", "--filter", `label=${LABEL_NAMESPACE}=${modes.namespace}`, "--format", "{{.Names}}"]);
  return inspectContainers(
    modes,
    names.stdout
      .split("\n")
      .map((line) => line.trim())
      .filter(Boolean),
  );
}
