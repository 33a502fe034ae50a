import type { SandboxDriverWithAgent } from "@sbx/core/adapter";
import { withCodeAgent } from "@sbx/core/adapter";
import type { DockerDriver } from "./docker-driver.js";
import type { AgentCommandsMode } from "./docker-settings.js";
import type { SandboxProbeAnswer } from "./sandbox-lost.js";

/**
 * A driver with the `probe` member issue 20 adds to the driver spec (core asks it once, bounded, after an ambiguous
 * failure). Declared here until `SandboxDriverV1` names it.
 */
export type DriverWithProbe = SandboxDriverWithAgent & {
  /** Moves the sandbox's end from outside (ADR 0050). */
  setLifetime(request: { expiresAt: string }): Promise<{ expiresAt: string }>;
  /** Whether the sandbox still runs: `"running"`, `"gone"` (removed or stopped) or `"unknown"` (no answer). */
  probe(options: { signal?: AbortSignal }): Promise<SandboxProbeAnswer>;
};

/**
 * Attaches the sbx sandbox agent to a Docker driver: code runs and contexts go through it, started lazily with one
 * long-lived exec; commands go through it too while it runs (adr/0025, `settings.agentCommands`), held to the same
 * enforcement as the exec path (each carries an audit tag the root kill helper finds, a SIGKILL exit is checked for
 * the OOM killer, a gone container is lost).
 */
export function withSandboxAgent(driver: DockerDriver, agentCommands: AgentCommandsMode): DriverWithProbe {
  const attached = withCodeAgent(driver, {
    backend: "docker",
    commands: agentCommands === "off" ? "driver" : "agent",
    commandsStartAgent: agentCommands === "start",
    enforcement: driver.agentEnforcement,
  });
  return Object.assign(attached, {
    probe: (options: { signal?: AbortSignal }) => driver.probe(options),
    setLifetime: (request: { expiresAt: string }) => driver.setLifetime(request),
  });
}
