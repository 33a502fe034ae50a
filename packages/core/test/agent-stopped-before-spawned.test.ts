/**
 * A command that stops the sbx agent before the agent reported it started (`kill -STOP $PPID` at once): the heartbeat
 * counts the command from the moment its `spawn` was sent, so the stopped agent is replaced and the command fails typed
 * within about 12 s (before, the heartbeat counted from `spawned`, and the caller waited for the command's own
 * timeout); and the command is not run again on the driver's own path (it may have run). The agent runs on this host;
 * the test stops it itself just before the `spawn` frame reaches it, so the stop always comes first.
 */
import { spawnSync } from "node:child_process";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { withCodeAgent, type SandboxDriverV1, type SpawnedProcess } from "../src/adapter.ts";
import { caught } from "./support/caught.ts";
import { sandboxOverAgentDriver } from "./support/host-agent-sandbox.ts";
import { createHostProcessDriver } from "./support/host-process-driver.ts";

const hasPython = spawnSync("python3", ["-c", "import sys; assert sys.version_info >= (3, 8)"]).status === 0;
let workspace: string;

beforeAll(async () => {
  workspace = await mkdtemp(join(tmpdir(), "sbx-stopped-agent-"));
});
afterAll(async () => {
  await rm(workspace, { recursive: true, force: true });
});

/** The host-process driver, with the agent SIGSTOPped (`stopNext`) or SIGKILLed (`killNext`) just before a `spawn` frame is written to it. */
function driverStoppingTheAgent() {
  const base = createHostProcessDriver(workspace);
  const state = { stopNext: false, killNext: false, agentPid: 0, stopped: false, spawnedCommands: [] as string[] };
  const driver: SandboxDriverV1 = {
    ...base,
    async spawn(request) {
      const started: SpawnedProcess = await base.spawn(request);
      if (!request.command.includes("python3 -I -u -c")) {
        state.spawnedCommands.push(request.command);
        return started;
      }
      state.agentPid = Number(started.pid);
      return {
        ...started,
        writeStdin: async (data) => {
          if (state.stopNext && Buffer.from(data).includes('"type":"spawn"')) {
            state.stopNext = false;
            process.kill(state.agentPid, "SIGSTOP");
            state.stopped = true;
          }
          if (state.killNext && Buffer.from(data).includes('"type":"spawn"')) {
            state.killNext = false;
            process.kill(state.agentPid, "SIGKILL");
          }
          return started.writeStdin(data);
        },
      };
    },
  };
  return { driver: withCodeAgent(driver, { backend: "host-agent-test", commands: "agent", commandsStartAgent: true }), state };
}

describe.skipIf(!hasPython)("a command that stops the agent before it reported the start", () => {
  it("fails typed once the heartbeat finds the agent silent, and is not run again on the driver's path", async () => {
    const { driver, state } = driverStoppingTheAgent();
    await using sandbox = sandboxOverAgentDriver(driver);
    // The agent runs and takes commands.
    expect((await sandbox.commands.run("echo through-agent")).stdout).toBe("through-agent\n");
    expect(state.agentPid).toBeGreaterThan(0);
    state.stopNext = true;
    // The command's own timeout (60 s) is far beyond the heartbeat's 12 s: a regression waits for it and fails here.
    const error = await caught(() => sandbox.commands.run("echo ran >> runs.txt; sleep 30", { timeoutMs: 60_000 }));
    expect(state.stopped).toBe(true);
    expect(error).toMatchObject({ code: "SBX_PROVIDER", retryable: true });
    expect((error as Error).message).toMatch(/did not answer for 10000 ms while commands ran/);
    // Stopped before it read the frame, the agent never ran the command; the driver's path did not run it either.
    expect(state.spawnedCommands).toEqual([]);
    expect(await readFile(join(workspace, "runs.txt"), "utf8").catch(() => "")).toBe("");
    // Later commands work (the next agent, or the driver's path).
    expect((await sandbox.commands.run("echo usable")).stdout).toBe("usable\n");
  });

  it("an agent lost after the command was sent: the call fails, retryable, and the command is not run again on the driver's path", async () => {
    const { driver, state } = driverStoppingTheAgent();
    await using sandbox = sandboxOverAgentDriver(driver);
    expect((await sandbox.commands.run("echo through-agent")).stdout).toBe("through-agent\n");
    state.killNext = true;
    const error = await caught(() => sandbox.commands.run("echo ran >> runs-2.txt", { timeoutMs: 60_000 }));
    expect(error).toMatchObject({ code: "SBX_PROVIDER", retryable: true });
    expect((error as Error).message).toMatch(/agent running the command was lost/);
    // It may have run (here it did not: the agent died before reading it); sbx does not run it a second time.
    expect(state.spawnedCommands).toEqual([]);
    expect(await readFile(join(workspace, "runs-2.txt"), "utf8").catch(() => "")).toBe("");
    expect((await sandbox.commands.run("echo usable")).stdout).toBe("usable\n");
  });
});
