import { attachSandboxAgent, type AttachedSandboxAgent } from "../agent/code-agent.js";
import type { SandboxAgentClient } from "../agent/agent-client.js";
import type { SandboxDriverV1, SpawnRequest } from "../v1/provider.js";

/** The spawn an attached agent starts its process (and falls back to for commands) through: set when the sandbox is made. */
type SpawnTarget = { current: SandboxDriverV1["spawn"] };

/** An agent attached before its sandbox existed (a warm pool's driver), waiting for `resolveDriverMethods` to take it. */
interface AgentAttachedAhead {
  readonly attached: AttachedSandboxAgent;
  readonly spawnTarget: SpawnTarget;
}

/** Agents attached ahead, by driver: taken once, when the sandbox around the driver is made. */
const attachedAhead = new WeakMap<SandboxDriverV1, AgentAttachedAhead>();

/**
 * True when core attaches the sbx sandbox agent to this driver: it declares `codeAgent`. A driver with its own `runCode`
 * (E2B's code interpreter) keeps it; the agent then gives only the methods the driver lacks (ports, ADR 0060).
 */
export function declaresCoreAgent(driver: SandboxDriverV1): boolean {
  return driver.codeAgent !== undefined;
}

/**
 * Core's one way of attaching the agent a driver declares (ADR 0037, ADR 0044): its own process gets the driver's base
 * environment beneath (as every command does through `SandboxState`), whether it starts through `spawn` or the
 * backend's `enforcement.spawnAgent`; a driver merges nothing itself. `spawn` is the path the agent starts through and
 * commands fall back to.
 */
export function attachDeclaredAgent(driver: SandboxDriverV1, backend: string, spawn: SandboxDriverV1["spawn"]): AttachedSandboxAgent {
  return attachSandboxAgent({ workspace: driver.workspace, spawn }, { backend, ...driver.codeAgent, baseEnvironment: driver.baseEnvironment });
}

/**
 * Attaches the declared agent now, before any sandbox is made around `driver` (a warm pool, ADR 0050, ADR 0057), by
 * the same path `resolveDriverMethods` takes, and returns its client (undefined when core attaches none). The sandbox
 * made later takes this agent instead of attaching another; until then it spawns through the driver's own `spawn`
 * (no credentials exist yet), and from then through the spawn that sandbox resolves (with its credentials' values).
 */
export function attachAgentAhead(driver: SandboxDriverV1, backend: string): SandboxAgentClient | undefined {
  if (!declaresCoreAgent(driver)) return undefined;
  const ownSpawn = driver.spawn.bind(driver);
  const spawnTarget: SpawnTarget = { current: ownSpawn };
  const attached = attachDeclaredAgent(driver, backend, (request: SpawnRequest) => spawnTarget.current(request));
  attachedAhead.set(driver, { attached, spawnTarget });
  return attached.agent;
}

/**
 * Takes the agent attached ahead to `driver`, if any (once: a second sandbox around the same driver would attach its
 * own), and points its spawn at `spawn` from now on.
 */
export function takeAgentAttachedAhead(driver: SandboxDriverV1, spawn: SandboxDriverV1["spawn"]): AttachedSandboxAgent | undefined {
  const ahead = attachedAhead.get(driver);
  if (!ahead) return undefined;
  attachedAhead.delete(driver);
  ahead.spawnTarget.current = spawn;
  return ahead.attached;
}

/**
 * Stops an agent attached ahead that no sandbox took (an idle pooled sandbox being destroyed): bounded, never rejects.
 * Nothing to do when none is attached or it was taken (the sandbox's own destroy stops it then).
 */
export async function stopAgentAttachedAhead(driver: SandboxDriverV1): Promise<void> {
  const ahead = attachedAhead.get(driver);
  if (!ahead) return;
  attachedAhead.delete(driver);
  await ahead.attached.stop();
}
