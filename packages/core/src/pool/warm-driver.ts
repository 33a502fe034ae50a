import type { SandboxAgentClient } from "../agent/agent-client.js";
import { attachAgentAhead, stopAgentAttachedAhead } from "../channel/agent-attached-ahead.js";
import type { SandboxDriverV1 } from "../v1/provider.js";

/**
 * Starts the sbx sandbox agent of a pooled driver now, so the first command or code run of an acquired sandbox pays
 * for neither (ADR 0050). A driver declaring `codeAgent` gets its agent attached by core's one attach path
 * (`attachAgentAhead`, the same `resolveDriverMethods` takes; ADR 0057): the sandbox made around the driver at acquire
 * takes that agent, so every rule of that path (the base environment beneath, the credentials' values on spawns, the
 * agent stopped before `destroy`) holds for pooled sandboxes too, and the driver itself is handed on unwrapped, with
 * all its methods. A driver that attached one itself (`withCodeAgent`) has it started. The agent starts with no
 * secrets: each command and code run carries its environment. A failed start leaves commands on the driver's
 * `spawn`, as anywhere else.
 */
export async function warmDriver(driver: SandboxDriverV1, backend: string): Promise<SandboxDriverV1> {
  const agent = attachAgentAhead(driver, backend) ?? (driver as { agent?: SandboxAgentClient }).agent;
  if (agent && typeof agent.startForCommands === "function") await agent.startForCommands();
  return driver;
}

/** Destroys a pooled driver no one acquired: its agent attached ahead is stopped first (bounded), as a sandbox's destroy does. */
export async function destroyWarmDriver(driver: SandboxDriverV1): Promise<void> {
  await stopAgentAttachedAhead(driver);
  await driver.destroy();
}
