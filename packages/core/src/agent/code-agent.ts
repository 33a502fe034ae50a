import type { CodeRequest, DriverExecution, SandboxDriverV1 } from "../v1/provider.js";
import { SbxError } from "../errors/index.js";
import { withinTime } from "../runtime/deadline.js";
import { SandboxAgentClient, type SandboxAgentClientOptions } from "./agent-client.js";

/** A driver with the sbx sandbox agent attached: `runCode` and `createCodeContext` are always present. */
export type SandboxDriverWithAgent = SandboxDriverV1 &
  Required<Pick<SandboxDriverV1, "runCode" | "createCodeContext">> & {
    /** The agent client, for adapters and tests that need more (closing a context, the agent's hello). */
    readonly agent: SandboxAgentClient;
  };

/**
 * Lets any driver that can `spawn` a process with stdin and stdout offer persistent code contexts and rich results:
 * returns a driver whose `runCode` and `createCodeContext` go through the sbx sandbox agent (Python 3.8+ stdlib,
 * injected at runtime, started lazily with one long-lived spawn on the first call). The adapter then declares
 * `STATEFUL_CODE` and `RICH_RESULTS` in its manifest. Every other primitive is the driver's own; `destroy` stops the
 * agent first. An image without python3 gives `RuntimeMissingError` on code calls while commands keep working.
 * @example return withCodeAgent(driver, { backend: "docker" });
 */
export function withCodeAgent(
  driver: SandboxDriverV1,
  options: SandboxAgentClientOptions & {
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
     * leaves commands on the driver's `spawn` (they never wait for a restart).
     */
    commandsStartAgent?: boolean;
  },
): SandboxDriverWithAgent {
  const agent = new SandboxAgentClient(driver, options);
  const commandsThroughAgent = (options.commands ?? (options.enforcement ? "agent" : "driver")) === "agent";
  const spawn: SandboxDriverV1["spawn"] = async (request) => {
    if (!commandsThroughAgent) return driver.spawn(request);
    if (options.commandsStartAgent && !agent.warm) await agent.startForCommands();
    if (!agent.commandsReady) return driver.spawn(request);
    // Refused before the command started (no suitable agent, the agent died first): the plain path.
    return agent.spawnCommand(request).catch((error: unknown) => {
      if (SbxError.isInstance(error) && error.code === "SBX_SANDBOX_NOT_FOUND") throw error;
      return driver.spawn(request);
    });
  };
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
    agent,
    spawn,
    // A per-call output limit, when core passes one, is applied inside the sandbox too.
    runCode: (request: CodeRequest): Promise<DriverExecution> => agent.run(request, { outputLimitBytes: request.outputLimitBytes }),
    createCodeContext: (request) => agent.createContext(request),
    readFile: (path, fileOptions) => driver.readFile(path, fileOptions),
    writeFile: (path, data, fileOptions) => driver.writeFile(path, data, fileOptions),
    // The optional file operations pass through when the driver has them; otherwise core's defaults apply.
    list: driver.list && ((path, fileOptions) => driver.list!(path, fileOptions)),
    stat: driver.stat && ((path, fileOptions) => driver.stat!(path, fileOptions)),
    remove: driver.remove && ((path, fileOptions) => driver.remove!(path, fileOptions)),
    mkdir: driver.mkdir && ((path, fileOptions) => driver.mkdir!(path, fileOptions)),
    rename: driver.rename && ((from, to, fileOptions) => driver.rename!(from, to, fileOptions)),
    async destroy() {
      // Bounded: a stuck agent must not hold up the sandbox's removal, which ends the agent anyway.
      await withinTime(
        agent.stop().catch(() => {}),
        2_000,
        () => undefined,
      );
      await driver.destroy();
    },
  };
}
