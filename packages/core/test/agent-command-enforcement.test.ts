import { spawnSync } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { isSbxError } from "../src/index.ts";
import { newCommandTag, withCodeAgent, type AgentCommandEnforcement } from "../src/adapter.ts";
import { sandboxOverAgentDriver } from "./support/host-agent-sandbox.ts";
import { createHostProcessDriver } from "./support/host-process-driver.ts";
import { ownLoginuid, UNSET_LOGINUID } from "./support/loginuid.ts";

// The backend-enforcement hooks of commands through the agent (adr/0025), on host processes: every command carries the
// tag the hooks issued, kills go through `killTagged`, a SIGKILL exit asks the OOM probe, and a dead agent's commands
// are killed through the hooks before they fail. Needs python3 >= 3.8 and an unset loginuid for this test process
// (so the agent may give each command its own); elsewhere it skips, saying so.

const loginuid = ownLoginuid();
const hasPython = spawnSync("python3", ["-c", "import sys; assert sys.version_info >= (3, 8)"]).status === 0;
const usable = hasPython && loginuid === UNSET_LOGINUID;
if (!usable)
  console.warn(
    `\n[sbx] SKIPPING the agent command-enforcement tests: ${hasPython ? `this process's loginuid is ${loginuid} (needs unset)` : "no python3 >= 3.8"}\n`,
  );

/** Host processes carrying `tag` (not zombies). */
function tagged(tag: string): number[] {
  const found: number[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/loginuid`, "utf8").trim() !== tag) continue;
      const state = readFileSync(`/proc/${entry}/stat`, "utf8").split(") ").pop()!.split(" ")[0];
      if (state !== "Z" && state !== "X") found.push(Number(entry));
    } catch {
      // Gone meanwhile.
    }
  }
  return found;
}

/** A recording enforcement over host processes: stop then kill everything with the tag, until none is left. */
function recordingEnforcement(base: ReturnType<typeof createHostProcessDriver>) {
  const calls = { tags: [] as string[], killed: [] as string[], outOfMemoryAsked: 0 };
  let nextOutOfMemory: boolean | null = false;
  const enforcement: AgentCommandEnforcement = {
    spawnAgent: (request) => base.spawn(request),
    newTag: () => {
      const tag = newCommandTag();
      calls.tags.push(tag);
      return tag;
    },
    async killTagged(tag) {
      calls.killed.push(tag);
      for (const signal of ["SIGSTOP", "SIGKILL"] as const) {
        for (let round = 0; round < 1000; round++) {
          const left = tagged(tag);
          if (left.length === 0) break;
          for (const pid of left) {
            try {
              process.kill(pid, signal);
            } catch {
              // Gone.
            }
          }
          if (signal === "SIGSTOP") break;
          await new Promise((resolve) => setTimeout(resolve, 5));
        }
      }
      if (tagged(tag).length > 0) throw new Error("tagged processes survived");
    },
    async outOfMemoryKilled() {
      calls.outOfMemoryAsked++;
      return nextOutOfMemory;
    },
    lostError: async () => undefined,
  };
  return { enforcement, calls, setOutOfMemory: (value: boolean | null) => (nextOutOfMemory = value) };
}

describe.skipIf(!usable)("commands through the agent with the backend's enforcement", () => {
  let directory: string;
  beforeAll(async () => {
    directory = await mkdtemp(join(tmpdir(), "sbx-core-agent-enforcement-"));
  });
  afterAll(async () => {
    await rm(directory, { recursive: true, force: true });
  });

  function setUp(options: { commandsStartAgent?: boolean } = {}) {
    const base = createHostProcessDriver(directory);
    const recording = recordingEnforcement(base);
    const driver = withCodeAgent(base, { backend: "host-agent-test", enforcement: recording.enforcement, ...options });
    const sandbox = sandboxOverAgentDriver(driver);
    return { base, driver, sandbox, ...recording };
  }

  it("go through the agent by default once it runs, each with the tag the backend issued", async () => {
    const { base, driver, sandbox, calls } = setUp();
    try {
      await sandbox.commands.run("true");
      expect(calls.tags).toEqual([]); // Not started by a command: the driver's spawn ran it.
      await sandbox.runCode("1");
      expect(driver.agent.hello?.command_tags).toBe(true);
      const spawns = base.commands.length;
      const result = await sandbox.commands.run("cat /proc/self/loginuid; setsid sh -c 'cat /proc/self/loginuid'");
      expect(base.commands.length).toBe(spawns);
      expect(calls.tags).toHaveLength(1);
      expect(result.stdout).toBe(`${calls.tags[0]}${calls.tags[0]}`); // loginuid has no newline
      expect(result.outOfMemoryKilled).toBe(false);
    } finally {
      await sandbox.kill();
    }
  });

  it("a timeout is the backend's tag kill: an escaped setsid + env -i child is gone, and killed is true", async () => {
    const { sandbox, calls } = setUp({ commandsStartAgent: true });
    try {
      const error = await sandbox.commands.run("setsid env -i sh -c 'sleep 60' & sleep 60", { timeoutMs: 500 }).catch((caught: unknown) => caught);
      expect(error).toMatchObject({ code: "SBX_TIMEOUT", killed: true });
      expect(calls.killed).toEqual([calls.tags[0]]);
      expect(tagged(calls.tags[0]!)).toEqual([]);
    } finally {
      await sandbox.kill();
    }
  });

  it("a SIGKILL sbx did not send asks the backend's out-of-memory probe; a grown counter is unknown, never true (adr/0030)", async () => {
    const { sandbox, calls, setOutOfMemory } = setUp({ commandsStartAgent: true });
    try {
      setOutOfMemory(true);
      const result = await sandbox.commands.run("kill -9 $$");
      expect(result).toMatchObject({ exitCode: 137, outOfMemoryKilled: null });
      expect(calls.outOfMemoryAsked).toBe(1);
      setOutOfMemory(false);
      expect((await sandbox.commands.run("kill -9 $$")).outOfMemoryKilled).toBe(false);
    } finally {
      await sandbox.kill();
    }
  });

  it("when the agent dies mid-command, the command's processes are killed through the backend, it fails typed, and the next command uses the driver", async () => {
    const { base, driver, sandbox, calls } = setUp({ commandsStartAgent: true });
    try {
      const handle = await sandbox.commands.start("setsid env -i sh -c 'sleep 60' & sleep 60");
      const tag = calls.tags[0]!;
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(tagged(tag).length).toBeGreaterThanOrEqual(2);
      process.kill(Number(driver.agent.hello?.pid), "SIGKILL");
      const error = await handle.wait().catch((caught: unknown) => caught);
      expect(isSbxError(error, "SBX_PROVIDER")).toBe(true);
      expect((error as Error).message).toMatch(/processes were killed \(verified\)/);
      expect(calls.killed).toContain(tag);
      expect(tagged(tag)).toEqual([]);
      const spawns = base.commands.length;
      expect((await sandbox.commands.run("echo plain")).stdout).toBe("plain\n");
      expect(base.commands.length).toBe(spawns + 1);
    } finally {
      await sandbox.kill();
    }
  });
});
