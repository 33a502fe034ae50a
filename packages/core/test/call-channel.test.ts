/**
 * The call channel (ADR 0037): the lost-sandbox rule with `probe()`, the driver's base environment merged once beneath
 * the caller's, file reads and writes defaulted over `spawn`, and the sandbox agent applied by core for a driver that
 * declares `codeAgent`.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createSandbox, FileNotFoundError, ProviderError, SandboxNotFoundError } from "../src/index.ts";
import { defineCapabilities, newCommandTag, type ProbeAnswer, type SandboxDriverV1, type SpawnRequest } from "../src/adapter.ts";
import { caught } from "./support/caught.ts";
import { createHostProcessDriver } from "./support/host-process-driver.ts";
import { sandboxOverAgentDriver } from "./support/host-agent-sandbox.ts";
import { createMemoryProvider, type MemoryDriver } from "./support/memory-driver.ts";

/** A memory sandbox whose driver is changed before core makes the sandbox (core resolves its methods once). */
async function memorySandbox(prepare: (driver: MemoryDriver) => void) {
  const provider = createMemoryProvider({ backend: "channel" });
  let made: MemoryDriver | undefined;
  const sandbox = await createSandbox(
    {
      ...provider,
      create: async (request) => {
        made = (await provider.create(request)) as MemoryDriver;
        prepare(made);
        return made;
      },
    },
    { env: { FROM_SANDBOX: "sandbox", SHARED: "sandbox" } },
  );
  return { sandbox, driver: made! };
}

/** Gives `driver` a probe that answers `answer` (or runs it) and counts its calls. */
function withProbe(driver: MemoryDriver, answer: () => Promise<ProbeAnswer>): { calls: number } {
  const counter = { calls: 0 };
  (driver as SandboxDriverV1).probe = async () => {
    counter.calls++;
    return answer();
  };
  return counter;
}

describe("the lost-sandbox rule: an ambiguous failure asks probe() once", () => {
  it('"gone" turns a backend failure into SandboxNotFoundError and marks the sandbox lost', async () => {
    let probe!: { calls: number };
    const { sandbox } = await memorySandbox((driver) => {
      probe = withProbe(driver, async () => "gone");
    });
    const failed = await caught(() => sandbox.commands.run("fail connection reset"));
    expect(failed).toBeInstanceOf(SandboxNotFoundError);
    expect(failed.message).toContain("connection reset");
    expect(probe.calls).toBe(1);
    expect(sandbox.closed).toBe(true);
    const later = await caught(() => sandbox.files.read("anything.txt"));
    expect(later).toBeInstanceOf(SandboxNotFoundError);
    expect(probe.calls).toBe(1);
    await sandbox.kill();
  });

  it('"running" and "unknown" leave the failure as it was', async () => {
    for (const answer of ["running", "unknown"] as const) {
      let probe!: { calls: number };
      const { sandbox } = await memorySandbox((driver) => {
        probe = withProbe(driver, async () => answer);
      });
      const failed = await caught(() => sandbox.commands.run("fail connection reset"));
      expect(failed).toBeInstanceOf(ProviderError);
      expect(probe.calls).toBe(1);
      expect(sandbox.closed).toBe(false);
      expect((await sandbox.commands.run("echo still here")).stdout).toBe("still here\n");
      await sandbox.kill();
    }
  });

  it("a probe that throws or answers something else proves nothing", async () => {
    const answers: Array<() => Promise<ProbeAnswer>> = [
      async () => {
        throw new Error("probe broke");
      },
      async () => "vanished" as ProbeAnswer,
    ];
    for (const answer of answers) {
      const { sandbox } = await memorySandbox((driver) => {
        withProbe(driver, answer);
      });
      expect(await caught(() => sandbox.commands.run("fail reset"))).toBeInstanceOf(ProviderError);
      expect(sandbox.closed).toBe(false);
      await sandbox.kill();
    }
  });

  it("a probe that never answers is bounded: the original failure comes back", async () => {
    let probe!: { calls: number };
    const { sandbox } = await memorySandbox((driver) => {
      probe = withProbe(driver, () => new Promise<ProbeAnswer>(() => {}));
    });
    const started = Date.now();
    const failed = await caught(() => sandbox.commands.run("fail reset"));
    expect(failed).toBeInstanceOf(ProviderError);
    expect(probe.calls).toBe(1);
    expect(Date.now() - started).toBeLessThan(60_000);
    expect(sandbox.closed).toBe(false);
    await sandbox.kill();
  }, 60_000);

  it("a typed answer (a missing file, a non-zero exit) never asks probe()", async () => {
    let probe!: { calls: number };
    const { sandbox } = await memorySandbox((driver) => {
      probe = withProbe(driver, async () => "gone");
    });
    expect(await caught(() => sandbox.files.read("missing.txt"))).toBeInstanceOf(FileNotFoundError);
    expect((await sandbox.commands.run("exit 3")).exitCode).toBe(3);
    expect(probe.calls).toBe(0);
    expect(sandbox.closed).toBe(false);
    await sandbox.kill();
  });

  it("a driver's own SandboxNotFoundError marks the sandbox lost without asking", async () => {
    let probe!: { calls: number };
    const { sandbox } = await memorySandbox((driver) => {
      probe = withProbe(driver, async () => "running");
      driver.spawn = async () => {
        throw new SandboxNotFoundError({ backend: "channel", sandboxId: driver.id, message: "The sandbox is gone." });
      };
    });
    expect(await caught(() => sandbox.commands.run("echo hi"))).toBeInstanceOf(SandboxNotFoundError);
    expect(probe.calls).toBe(0);
    expect(sandbox.closed).toBe(true);
    await sandbox.kill();
  });
});

describe("the driver's base environment", () => {
  it("is merged once, beneath the sandbox env and the command's env", async () => {
    const { sandbox, driver } = await memorySandbox((driver) => {
      Object.assign(driver, { baseEnvironment: { HTTP_PROXY: "http://127.0.0.1:3128", SHARED: "driver", PATH: "/driver/bin" } });
    });
    await sandbox.commands.run("echo hi", { env: { FROM_COMMAND: "command" } });
    const env = driver.processes[0]!.request.env;
    expect(env.HTTP_PROXY).toBe("http://127.0.0.1:3128");
    expect(env.SHARED).toBe("sandbox");
    expect(env.FROM_COMMAND).toBe("command");
    // Over core's own defaults: a driver may set PATH for its image.
    expect(env.PATH).toBe("/driver/bin");
    await sandbox.kill();
  });
});

describe("a driver with only spawn, destroy and its audit record", () => {
  let workspace: string;
  beforeEach(async () => {
    workspace = await mkdtemp(join(tmpdir(), "sbx-channel-"));
  });
  afterEach(async () => {
    await rm(workspace, { recursive: true, force: true });
  });

  /** The host-process driver without any file method: core defaults every one of them over spawn. */
  function spawnOnlyDriver(): SandboxDriverV1 {
    const host = createHostProcessDriver(workspace);
    return { id: host.id, workspace: host.workspace, audit: host.audit, spawn: (request) => host.spawn(request), destroy: () => host.destroy() };
  }

  it("reads and writes files through core's defaults over spawn", async () => {
    const sandbox = sandboxOverAgentDriver(spawnOnlyDriver());
    await sandbox.files.write("notes/hello.txt", "hello from the default");
    expect(await sandbox.files.read("notes/hello.txt")).toBe("hello from the default");
    expect(await sandbox.files.exists("notes/missing.txt")).toBe(false);
    await sandbox.kill();
  });

  it("gets runCode and code contexts from the sandbox agent when it declares codeAgent", async () => {
    const driver: SandboxDriverV1 = { ...spawnOnlyDriver(), codeAgent: {} };
    const sandbox = sandboxOverAgentDriver(driver);
    const context = await sandbox.createCodeContext();
    await sandbox.runCode("counter = 41", { contextId: context.id });
    const execution = await sandbox.runCode("counter + 1", { contextId: context.id });
    expect(execution.error).toBeNull();
    expect(execution.results?.[0]?.data["text/plain"]).toBe("42");
    await sandbox.kill();
  });

  it("starts the agent with the driver's base environment, through spawn and through enforcement.spawnAgent alike", async () => {
    const baseEnvironment = { SBX_TEST_PROXY: "http://127.0.0.1:3128" };
    const plain = spawnOnlyDriver();
    const started: Record<string, string>[] = [];
    const enforcement = {
      spawnAgent: (request: SpawnRequest) => {
        started.push(request.env);
        return plain.spawn(request);
      },
      newTag: newCommandTag,
      killTagged: async () => {},
      outOfMemoryKilled: async () => null,
      lostError: async () => undefined,
    };
    for (const codeAgent of [{ commands: "driver" as const }, { commands: "driver" as const, enforcement }]) {
      const sandbox = sandboxOverAgentDriver({ ...plain, baseEnvironment, codeAgent });
      const context = await sandbox.createCodeContext();
      // Code in a context runs in an interpreter the agent's own process started: it sees what that process got.
      const execution = await sandbox.runCode("import os; os.environ.get('SBX_TEST_PROXY')", { contextId: context.id });
      expect(execution.error).toBeNull();
      expect(execution.results?.[0]?.data["text/plain"]).toBe("'http://127.0.0.1:3128'");
      await sandbox.kill();
    }
    // The backend's own agent start got it in its request: the driver merges nothing itself (ADR 0044).
    expect(started.map((env) => env.SBX_TEST_PROXY)).toEqual(["http://127.0.0.1:3128"]);
  });
});

it("a driver that declares codeAgent satisfies STATEFUL_CODE when the provider loads", async () => {
  const provider = createMemoryProvider({
    backend: "agentful",
    capabilities: defineCapabilities({ STATEFUL_CODE: true, languages: ["python"] }),
  });
  const sandbox = await createSandbox({
    ...provider,
    create: async (request) => Object.assign(await provider.create(request), { codeAgent: {} }),
  });
  expect(sandbox.capabilities.STATEFUL_CODE).toBe(true);
  await sandbox.kill();
});
