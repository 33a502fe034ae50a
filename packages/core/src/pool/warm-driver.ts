import { withCodeAgent } from "../agent/code-agent.js";
import type { SandboxAgentClient } from "../agent/agent-client.js";
import type { SandboxDriverV1 } from "../v1/provider.js";

/** A driver method bound to the driver, or undefined. */
function bound<Name extends keyof SandboxDriverV1>(driver: SandboxDriverV1, name: Name): SandboxDriverV1[Name] {
  const value = driver[name] as unknown;
  return (typeof value === "function" ? (value as (...args: unknown[]) => unknown).bind(driver) : undefined) as SandboxDriverV1[Name];
}

/**
 * Gives `warmed` every method of `driver` it lacks (bound to `driver`): `withCodeAgent` forwards the driver spec's file
 * methods, `probe` and `destroy` only, and a driver's other methods (`setLifetime`, and any a later capability adds)
 * must stay reachable on a pooled sandbox.
 */
function keepOtherMethods(driver: SandboxDriverV1, warmed: SandboxDriverV1): void {
  const methods = new Map<string, (...args: unknown[]) => unknown>();
  for (let holder: object | null = driver; holder !== null && holder !== Object.prototype; holder = Object.getPrototypeOf(holder) as object | null) {
    for (const name of Object.getOwnPropertyNames(holder)) {
      // Plain function values only: getters are not called, and the nearest definition wins.
      const value: unknown = Object.getOwnPropertyDescriptor(holder, name)?.value;
      if (name !== "constructor" && typeof value === "function" && !methods.has(name)) methods.set(name, value as (...args: unknown[]) => unknown);
    }
  }
  for (const [name, method] of methods) if (!(name in warmed)) Object.assign(warmed, { [name]: method.bind(driver) });
}

/**
 * A driver whose sbx sandbox agent is attached now and started, so the first command or code run of an acquired
 * sandbox pays for neither (ADR 0050). A driver declaring `codeAgent` gets the agent core would attach when the
 * sandbox is made (its own process with the driver's base environment beneath, as `resolveDriverMethods` does); a
 * driver that attached one itself (`withCodeAgent`) has it started. The agent starts with no secrets: each command and
 * code run carries its environment. A failed start leaves commands on the driver's `spawn`, as anywhere else.
 */
export async function warmDriver(driver: SandboxDriverV1, backend: string): Promise<SandboxDriverV1> {
  let warmed = driver;
  if (driver.codeAgent !== undefined && typeof driver.runCode !== "function") {
    const baseEnvironment = driver.baseEnvironment ?? {};
    const spawn = bound(driver, "spawn");
    warmed = withCodeAgent(
      {
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
        spawn: (request) => spawn({ ...request, env: { ...baseEnvironment, ...request.env } }),
        readFile: bound(driver, "readFile"),
        writeFile: bound(driver, "writeFile"),
        list: bound(driver, "list"),
        stat: bound(driver, "stat"),
        remove: bound(driver, "remove"),
        mkdir: bound(driver, "mkdir"),
        rename: bound(driver, "rename"),
        probe: bound(driver, "probe"),
        destroy: bound(driver, "destroy"),
      },
      { backend, ...driver.codeAgent },
    );
    keepOtherMethods(driver, warmed);
  }
  const agent = (warmed as { agent?: SandboxAgentClient }).agent;
  if (agent && typeof agent.startForCommands === "function") await agent.startForCommands();
  return warmed;
}
