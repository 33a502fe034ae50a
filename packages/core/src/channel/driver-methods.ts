import type { SandboxAgentClient } from "../agent/agent-client.js";
import { attachDeclaredAgent, declaresCoreAgent, takeAgentAttachedAhead } from "./agent-attached-ahead.js";
import { posixFileOperations } from "../posix/posix-files.js";
import type { SandboxDriverV1, SpawnRequest } from "../v1/provider.js";

/** Every method core calls on a sandbox, each resolved once: the driver's own, or core's default, or the agent's. */
export interface ResolvedDriverMethods extends Required<
  Pick<SandboxDriverV1, "spawn" | "readFile" | "writeFile" | "stat" | "list" | "remove" | "mkdir" | "rename" | "destroy">
> {
  /** The code channel: the driver's own, or the sandbox agent's; absent for core's one-shot Python over `spawn`. */
  readonly runCode: SandboxDriverV1["runCode"];
  /** Persistent code contexts: the driver's own, or the sandbox agent's; absent without either. */
  readonly createCodeContext: SandboxDriverV1["createCodeContext"];
  /** File watching: the driver's own, or the sandbox agent's; absent without either (ADR 0049). */
  readonly watchFiles: SandboxDriverV1["watchFiles"];
  /** Terminals: the driver's own, or the sandbox agent's; absent without either (ADR 0049). */
  readonly openTerminal: SandboxDriverV1["openTerminal"];
  /** Connections to a port inside: the driver's own, or the sandbox agent's; absent without either (ADR 0053). */
  readonly openPortConnection: SandboxDriverV1["openPortConnection"];
  /** The driver's `probe`, when it has one. */
  readonly probe: SandboxDriverV1["probe"];
  /** The sbx sandbox agent core attached, when it attached one (its heartbeat is held while paused, ADR 0055). */
  readonly agent: SandboxAgentClient | undefined;
}

/** What resolving needs besides the driver. */
export interface DriverMethodOptions {
  /** Backend name, for the agent's errors. */
  readonly backend: string;
  /** Secret values issued after the sandbox existed (credentials), added to every spawn request for adapters that record requests. */
  readonly spawnSecretValues?: () => readonly string[];
}

/** A driver method bound to the driver (classes with private fields keep working), or undefined. */
function own<Name extends keyof SandboxDriverV1>(driver: SandboxDriverV1, name: Name): SandboxDriverV1[Name] {
  const value = driver[name] as unknown;
  return (typeof value === "function" ? (value as (...args: unknown[]) => unknown).bind(driver) : undefined) as SandboxDriverV1[Name];
}

/**
 * Resolves, once when the sandbox is made, which method core calls for each operation (ADR 0037): the driver's own
 * where it has one; the file operations it leaves out from core's POSIX helper over its `spawn` (ADR 0020, ADR 0031);
 * `runCode` and `createCodeContext` from the sbx sandbox agent when the driver declares `codeAgent` and has no
 * `runCode` of its own (a driver's own method wins over the agent's; the agent is stopped before `destroy`). Nothing wraps the driver per call, except a driver's own `stat`
 * (checked for `followSymlinks`, ADR 0046).
 */
export function resolveDriverMethods(driver: SandboxDriverV1, options: DriverMethodOptions): ResolvedDriverMethods {
  const driverSpawn = own(driver, "spawn");
  const { spawnSecretValues } = options;
  const plainSpawn = spawnSecretValues ? (request: SpawnRequest) => driverSpawn({ ...request, secretValues: spawnSecretValues() }) : driverSpawn;
  const ownDestroy = own(driver, "destroy");
  const ownRunCode = own(driver, "runCode");
  const agentDeclared = declaresCoreAgent(driver);
  // One attach path (`attachDeclaredAgent`), also for an agent a warm pool attached ahead (ADR 0057): taken here.
  const agent = agentDeclared ? (takeAgentAttachedAhead(driver, plainSpawn) ?? attachDeclaredAgent(driver, options.backend, plainSpawn)) : undefined;
  // Commands through the agent where it carries them; the agent itself starts through the plain spawn above.
  const spawn = agent ? agent.spawn : plainSpawn;
  const defaults = posixFileOperations({ workspace: driver.workspace, spawn });
  return {
    spawn,
    readFile: own(driver, "readFile") ?? defaults.readFile,
    writeFile: own(driver, "writeFile") ?? defaults.writeFile,
    stat: statFollowingLinks(own(driver, "stat"), defaults.stat),
    list: own(driver, "list") ?? defaults.list,
    remove: own(driver, "remove") ?? defaults.remove,
    mkdir: own(driver, "mkdir") ?? defaults.mkdir,
    rename: own(driver, "rename") ?? defaults.rename,
    runCode: ownRunCode ?? agent?.runCode,
    createCodeContext: ownRunCode ? own(driver, "createCodeContext") : (agent?.createCodeContext ?? own(driver, "createCodeContext")),
    watchFiles: own(driver, "watchFiles") ?? agent?.watchFiles,
    openTerminal: own(driver, "openTerminal") ?? agent?.openTerminal,
    openPortConnection: own(driver, "openPortConnection") ?? agent?.openPortConnection,
    probe: own(driver, "probe"),
    agent: agent?.agent,
    destroy: agent
      ? async () => {
          await agent.stop();
          await ownDestroy();
        }
      : ownDestroy,
  };
}

/**
 * The driver's own `stat`, or core's default. A driver written before `followSymlinks` existed (the sbx 0.1 shape)
 * ignores the option and describes a final link as `symlink`, which a followed stat never is: core then asks its own
 * file helper over `spawn`, which follows the link confined to the workspace (ADR 0046). Calls without the option go
 * to the driver's own method unchanged.
 */
function statFollowingLinks(
  ownStat: SandboxDriverV1["stat"],
  defaultStat: NonNullable<SandboxDriverV1["stat"]>,
): NonNullable<SandboxDriverV1["stat"]> {
  if (ownStat === undefined) return defaultStat;
  return async (path, options) => {
    const entry = await ownStat(path, options);
    if (options.followSymlinks !== true || entry.type !== "symlink") return entry;
    return defaultStat(path, options);
  };
}
