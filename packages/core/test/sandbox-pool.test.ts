/**
 * The pool over a driver that declares `codeAgent` (ADR 0050): the agent is started at pool time through the driver's
 * own spawn (real host processes, the host's python3), and the driver's other methods (`setLifetime`) stay reachable
 * on the sandbox handed out. The pool's behaviour on real backends: packages/fake/test/pool.test.ts and
 * packages/docker/test/pool.test.ts.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, expect, it } from "vitest";
import { createSandboxPool, type SandboxProviderV1 } from "../src/index.ts";
import { defineCapabilities, type SandboxDriverV1 } from "../src/adapter.ts";
import { createHostProcessDriver } from "./support/host-process-driver.ts";

const workspaces: string[] = [];
afterEach(async () => {
  await Promise.all(workspaces.splice(0).map((workspace) => rm(workspace, { recursive: true, force: true })));
});

type PoolTestDriver = SandboxDriverV1 & { commands: string[]; lifetimes: string[]; agentExits: Array<Promise<unknown>> };

function agentProvider(baseEnvironment?: Record<string, string>): SandboxProviderV1 & { drivers: PoolTestDriver[] } {
  const drivers: PoolTestDriver[] = [];
  return {
    specificationVersion: "sbx-v1",
    backend: "pool-agent-test",
    packageName: "none",
    capabilities: defineCapabilities({ STATEFUL_CODE: true, RICH_RESULTS: true, SET_LIFETIME: true, languages: ["python"] }),
    isolating: false,
    detect: async () => ({ backend: "pool-agent-test", usable: true, reason: "", remedy: "", isolating: false }),
    async create() {
      const workspace = await mkdtemp(join(tmpdir(), "sbx-pool-agent-"));
      workspaces.push(workspace);
      const lifetimes: string[] = [];
      const agentExits: Array<Promise<unknown>> = [];
      const hostDriver = createHostProcessDriver(workspace);
      const hostSpawn = hostDriver.spawn.bind(hostDriver);
      const driver = Object.assign(hostDriver, {
        id: `pool-agent-${drivers.length + 1}`,
        codeAgent: {},
        baseEnvironment,
        agentExits,
        // Records the exit of every agent process it starts, to see the agent stopped.
        spawn: async (request: Parameters<SandboxDriverV1["spawn"]>[0]) => {
          const spawned = await hostSpawn(request);
          if (request.command.includes("python3 -I -u -c")) agentExits.push(spawned.exit);
          return spawned;
        },
        lifetimes,
        setLifetime: async (request: { expiresAt: string }) => {
          lifetimes.push(request.expiresAt);
          return { expiresAt: request.expiresAt };
        },
      });
      drivers.push(driver);
      return driver;
    },
    drivers,
  };
}

it("a driver declaring codeAgent has its agent started before acquire, and keeps its other methods on the sandbox handed out", async () => {
  const provider = agentProvider();
  await using pool = await createSandboxPool(provider, { size: 1 });
  await pool.warm();
  const driver = provider.drivers[0]!;
  // The agent's own process was spawned at pool time, before anyone acquired the sandbox.
  expect(driver.commands.filter((command) => command.includes("python3 -I -u -c")).length).toBe(1);
  await using sandbox = await pool.acquire();
  expect(sandbox.id).toBe(driver.id);
  const execution = await sandbox.runCode("21 * 2");
  expect(execution.error).toBeNull();
  expect(execution.results?.find((result) => result.isMainResult)?.data["text/plain"]).toBe("42");
  // No second agent was started for the code run.
  expect(driver.commands.filter((command) => command.includes("python3 -I -u -c")).length).toBe(1);
  const { expiresAt } = await sandbox.setLifetime({ timeoutMs: 120_000 });
  expect(driver.lifetimes).toEqual([expiresAt]);
});

it("a pooled sandbox's agent is attached by core's one path: the driver's base environment beneath, the driver itself handed on", async () => {
  const provider = agentProvider({ POOL_BASE: "beneath" });
  await using pool = await createSandboxPool(provider, { size: 1 });
  await pool.warm();
  await using sandbox = await pool.acquire();
  const execution = await sandbox.runCode("import os\nos.environ.get('POOL_BASE')");
  expect(execution.results?.find((result) => result.isMainResult)?.data["text/plain"]).toBe("'beneath'");
  expect((await sandbox.commands.run("echo $POOL_BASE", { env: { POOL_BASE: "caller" } })).stdout).toBe("caller\n");
  // Still the one agent started at pool time.
  expect(provider.drivers[0]!.agentExits.length).toBe(1);
});

it("closing a pool stops the agent of an idle sandbox before destroying it", async () => {
  const provider = agentProvider();
  const pool = await createSandboxPool(provider, { size: 1 });
  await pool.warm();
  const driver = provider.drivers[0]!;
  expect(driver.agentExits.length).toBe(1);
  await pool.close();
  // The host driver's destroy ends nothing: the agent exits only because the pool stopped it.
  const exit = await Promise.race([driver.agentExits[0]!, new Promise((resolve) => setTimeout(() => resolve("still running"), 10_000))]);
  expect(exit).not.toBe("still running");
});
