import type { CodeRequest, DriverExecution, SandboxDriverV1 } from "../v1/provider.js";
import { SbxError } from "../errors/index.js";
import { withinTime } from "../limits/deadline.js";
import { SandboxAgentClient, type SandboxAgentClientOptions } from "./agent-client.js";
import { agentCommandMayHaveRun } from "./agent-commands.js";

/** A driver with the sbx sandbox agent attached: `runCode` and `createCodeContext` are always present. */
export type SandboxDriverWithAgent = SandboxDriverV1 &
  Required<Pick<SandboxDriverV1, "runCode" | "createCodeContext" | "watchFiles" | "openTerminal" | "openPortConnection">> & {
    /** The agent client, for adapters and tests that need more (closing a context, the agent's hello). */
    readonly agent: SandboxAgentClient;
  };

/** How long stopping the agent may hold up the sandbox's destroy (which ends the agent anyway), in ms. */
const AGENT_STOP_BOUND_MS = 2_000;

/** Options of `attachSandboxAgent` and `withCodeAgent`: the agent client's, and which path commands take. */
export type CodeAgentOptions = SandboxAgentClientOptions & {
  /**
   * `"agent"`: commands go through the agent while it runs (no exec per command), and through the driver's own
   * `spawn` otherwise or if the agent refuses before the command started. `"driver"`: commands always use the
   * driver's `spawn`. Default: `"agent"` when `enforcement` is given (the backend's verified kill, out-of-memory report
   * and lost-sandbox rule then hold on both paths, adr/0025), else `"driver"` (without it, the agent path verifies
   * kills only within the command's session and reports `outOfMemoryKilled: null`).
   */
  commands?: "agent" | "driver";
  /**
   * Whether the first command starts the agent (and waits for it) when no code call has. Default false: the agent
   * starts with the first code call, and commands use it once it runs. Either way a failed start or a dead agent
   * leaves commands on the driver's `spawn` (they never wait for a restart). `"background"`: the first command starts
   * the agent without waiting for it and takes the driver's `spawn`; later commands take the agent once it runs.
   */
  commandsStartAgent?: boolean | "background";
};

/** The sandbox agent attached to a driver's `spawn`: the methods core uses in place of the driver's. */
export interface AttachedSandboxAgent {
  /** The agent client. */
  readonly agent: SandboxAgentClient;
  /** Starts a command: through the agent while it runs (when commands take that path), else the driver's `spawn`. */
  readonly spawn: SandboxDriverV1["spawn"];
  /** Runs code through the agent; a per-call output limit is applied inside the sandbox too. */
  readonly runCode: (request: CodeRequest) => Promise<DriverExecution>;
  /** Creates a persistent code context in the agent. */
  readonly createCodeContext: NonNullable<SandboxDriverV1["createCodeContext"]>;
  /** Watches a directory through the agent (inotify in the sandbox, ADR 0049). */
  readonly watchFiles: NonNullable<SandboxDriverV1["watchFiles"]>;
  /** Starts a terminal through the agent (a pseudo-terminal in the sandbox, ADR 0049); refused without `enforcement`. */
  readonly openTerminal: NonNullable<SandboxDriverV1["openTerminal"]>;
  /** Opens a connection to a port on the sandbox's loopback through the agent (ADR 0053). */
  readonly openPortConnection: NonNullable<SandboxDriverV1["openPortConnection"]>;
  /** Stops the agent, bounded (a stuck agent must not hold up the sandbox's removal). Never rejects. */
  readonly stop: () => Promise<void>;
}

/**
 * Attaches the sbx sandbox agent (Python 3.8+ stdlib, injected at runtime, started lazily with one long-lived spawn
 * on the first call) to anything that can `spawn` a process with stdin and stdout. Core calls it once, when it makes
 * a sandbox whose driver declares `codeAgent` (ADR 0037); the deprecated `withCodeAgent` uses it too.
 */
export function attachSandboxAgent(driver: Pick<SandboxDriverV1, "spawn" | "workspace">, options: CodeAgentOptions): AttachedSandboxAgent {
  const agent = new SandboxAgentClient(driver, options);
  const commandsThroughAgent = (options.commands ?? (options.enforcement ? "agent" : "driver")) === "agent";
  const spawn: SandboxDriverV1["spawn"] = async (request) => {
    if (!commandsThroughAgent) return driver.spawn(request);
    if (options.commandsStartAgent === "background" && !agent.warm) void agent.startForCommands();
    else if (options.commandsStartAgent && !agent.warm) await agent.startForCommands();
    if (!agent.commandsReady) return driver.spawn(request);
    // Refused before the command was sent (no suitable agent, the agent already gone) or refused by the agent: the
    // plain path. Lost after it was sent: the command may have run, so it is not run again behind the caller's back.
    return agent.spawnCommand(request).catch((error: unknown) => {
      if (SbxError.isInstance(error) && error.code === "SBX_SANDBOX_NOT_FOUND") throw error;
      if (agentCommandMayHaveRun(error)) throw error;
      return driver.spawn(request);
    });
  };
  return {
    agent,
    // Commands that never take the agent go straight to the driver (bound: no frame of ours between).
    spawn: commandsThroughAgent ? spawn : driver.spawn.bind(driver),
    runCode: (request) => agent.run(request, { outputLimitBytes: request.outputLimitBytes }),
    createCodeContext: (request) => agent.createContext(request),
    watchFiles: (request) => agent.watchFiles(request),
    openTerminal: (request) => agent.openTerminal(request),
    openPortConnection: (request) => agent.openPortConnection(request),
    stop: () =>
      withinTime(
        agent.stop().catch(() => {}),
        AGENT_STOP_BOUND_MS,
        () => new Error("the sandbox agent did not stop"),
      ).catch(() => {}),
  };
}

/**
 * Lets any driver that can `spawn` a process with stdin and stdout offer persistent code contexts and rich results:
 * returns a driver whose `runCode` and `createCodeContext` go through the sbx sandbox agent. The adapter then declares
 * `STATEFUL_CODE` and `RICH_RESULTS` in its manifest. Every other primitive is the driver's own; `destroy` stops the
 * agent first. An image without python3 gives `RuntimeMissingError` on code calls while commands keep working.
 * @deprecated Declare `codeAgent` on the driver instead (`{ commands, commandsStartAgent, enforcement }`): core then
 * applies the agent itself, once, without these forwarders (ADR 0037, ADR 0044). Kept for adapters written against
 * 0.1 (the frozen 0.1-shape adapter of the contract suite uses it); to be removed in 1.0.
 * @example return withCodeAgent(driver, { backend: "docker" });
 */
export function withCodeAgent(driver: SandboxDriverV1, options: CodeAgentOptions): SandboxDriverWithAgent {
  const attached = attachSandboxAgent(driver, { baseEnvironment: driver.baseEnvironment, ...options });
  /** The driver's own method bound to it, when it has one (otherwise core's default applies). */
  const own = <Name extends "readFile" | "writeFile" | "list" | "stat" | "remove" | "mkdir" | "rename" | "probe">(name: Name) =>
    driver[name]?.bind(driver) as SandboxDriverV1[Name];
  return {
    get id() {
      return driver.id;
    },
    get workspace() {
      return driver.workspace;
    },
    get audit() {
      return driver.audit;
    },
    get native() {
      return driver.native;
    },
    get baseEnvironment() {
      return driver.baseEnvironment;
    },
    agent: attached.agent,
    spawn: attached.spawn,
    runCode: attached.runCode,
    createCodeContext: attached.createCodeContext,
    watchFiles: driver.watchFiles ? (request) => driver.watchFiles!(request) : attached.watchFiles,
    openTerminal: driver.openTerminal ? (request) => driver.openTerminal!(request) : attached.openTerminal,
    openPortConnection: driver.openPortConnection ? (request) => driver.openPortConnection!(request) : attached.openPortConnection,
    readFile: own("readFile"),
    writeFile: own("writeFile"),
    list: own("list"),
    stat: own("stat"),
    remove: own("remove"),
    mkdir: own("mkdir"),
    rename: own("rename"),
    probe: own("probe"),
    async destroy() {
      await attached.stop();
      await driver.destroy();
    },
  };
}
