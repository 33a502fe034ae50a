/**
 * The Docker resources an emulator instance owns (its image check, its bridge network, its containers) and their
 * cleanup, both on `stop()` and, best effort, when the host process exits without stopping it.
 */
import { spawnSync } from "node:child_process";
import type Docker from "dockerode";
import type { FirewallRule } from "./firewall-rules.js";

/** Fails with a message naming the emulator when `image` is not present locally (emulators never pull). */
export async function requireLocalImage(docker: Docker, image: string, emulatorName: string): Promise<void> {
  try {
    await docker.getImage(image).inspect();
  } catch (error) {
    throw new Error(`${emulatorName}: image ${image} is not available locally (the emulator never pulls): ${(error as Error).message}`, {
      cause: error,
    });
  }
}

/** The network sandboxes with network access join, and whether the emulator created it (and so removes it). */
export interface EmulatorNetwork {
  readonly networkName: string;
  readonly ownsNetwork: boolean;
}

/**
 * Uses the caller's network when one is given, else creates a bridge network named `name` carrying `labels`.
 */
export async function useOrCreateNetwork(
  docker: Docker,
  options: { requested: string | undefined; name: string; labels: Record<string, string> },
): Promise<EmulatorNetwork> {
  if (options.requested) return { networkName: options.requested, ownsNetwork: false };
  await docker.createNetwork({ Name: options.name, Driver: "bridge", Labels: options.labels });
  return { networkName: options.name, ownsNetwork: true };
}

/** Force-removes every container carrying `label=value` (e.g. one left by a create racing with stop). */
export async function removeLabelledContainers(docker: Docker, label: string, value: string): Promise<void> {
  const leftovers = await docker.listContainers({ all: true, filters: { label: [`${label}=${value}`] } }).catch(() => []);
  await Promise.all(
    leftovers.map((container) =>
      docker
        .getContainer(container.Id)
        .remove({ force: true })
        .catch(() => undefined),
    ),
  );
}

/** What to remove synchronously when the process exits with an emulator still running. */
export interface SynchronousCleanup {
  readonly containerIds: readonly string[];
  readonly firewallRules: readonly FirewallRule[];
  /** The emulator's own network, when it created one. */
  readonly networkName?: string;
}

/** Best effort for process exit (no event loop left): removes containers, rules and network with the docker and iptables CLIs. */
export function removeSynchronously(cleanup: SynchronousCleanup): void {
  const containerIds = cleanup.containerIds.filter(Boolean);
  if (containerIds.length > 0) spawnSync("docker", ["rm", "-f", ...containerIds], { stdio: "ignore" });
  for (const rule of cleanup.firewallRules) spawnSync("iptables", ["-w", "5", "-D", rule.chain, ...rule.specification], { stdio: "ignore" });
  if (cleanup.networkName) spawnSync("docker", ["network", "rm", cleanup.networkName], { stdio: "ignore" });
}

const liveCleanups = new Set<() => void>();
let exitHandlersInstalled = false;

function runAllCleanups(): void {
  for (const cleanup of liveCleanups) cleanup();
}

function installExitHandlers(): void {
  if (exitHandlersInstalled) return;
  exitHandlersInstalled = true;
  process.once("exit", runAllCleanups);
  for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"] as const) {
    process.once(signal, () => {
      runAllCleanups();
      liveCleanups.clear();
      // Only take over termination when nobody else listens: re-raise the default behaviour.
      if (process.listenerCount(signal) === 0) process.kill(process.pid, signal);
    });
  }
}

/**
 * Runs `cleanup` (synchronous) if the process exits or gets SIGINT/SIGTERM/SIGHUP while the emulator runs. Returns
 * the function that unregisters it (call it from `stop()`).
 */
export function cleanUpOnProcessExit(cleanup: () => void): () => void {
  liveCleanups.add(cleanup);
  installExitHandlers();
  return () => void liveCleanups.delete(cleanup);
}
