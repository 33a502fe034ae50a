/**
 * The kill by process id of commands through the agent (ADR 0051), without a cluster: ids kept on the host by tag,
 * forgotten when the command ends, a tag whose id never arrived ends the sandbox instead of reporting a kill that did
 * not happen; and the verified kill script is core's tree kill plus a verification that can fail.
 */
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { KILL_PROCESS_TREE_SCRIPT } from "@sbx/core/adapter";
import { describe, expect, it } from "vitest";
import { CommandProcesses, newCommandTag } from "../src/command-processes.js";
import { KILL_NOT_VERIFIED_EXIT_CODE, VERIFIED_KILL_SCRIPT, verifiedKillArgv } from "../src/verified-kill.js";

function tracker() {
  const killed: number[] = [];
  const ended: string[] = [];
  const processes = new CommandProcesses({
    sandboxId: "sandbox-1",
    killTree: async (processId) => {
      killed.push(processId);
    },
    endSandbox: async (reason) => {
      ended.push(reason);
      return new Error(`ended: ${reason}`);
    },
  });
  return { processes, killed, ended };
}

describe("kubernetes command processes", () => {
  it("kills by the process id the agent reported, and forgets it when the command ended", async () => {
    const { processes, killed } = tracker();
    const tag = newCommandTag();
    expect(tag).toMatch(/^\d+$/);
    processes.started(tag, 4242);
    await processes.killTagged(tag);
    expect(killed).toEqual([4242]);
    processes.ended(tag);
    expect(processes.size).toBe(0);
  });

  it("ends the sandbox for a tag whose process id never arrived (or was not a process id), never reporting a kill", async () => {
    const { processes, killed, ended } = tracker();
    processes.started("7", Number.NaN);
    processes.started("8", 1);
    await expect(processes.killTagged("7")).rejects.toThrow(/ended: the sbx agent was lost before it reported a command's process id/);
    await expect(processes.killTagged("8")).rejects.toThrow(/ended/);
    expect(killed).toEqual([]);
    expect(ended).toHaveLength(2);
  });

  it("builds the verified kill from core's tree kill functions and a verification loop", () => {
    expect(VERIFIED_KILL_SCRIPT.startsWith(KILL_PROCESS_TREE_SCRIPT.slice(0, KILL_PROCESS_TREE_SCRIPT.indexOf("\nfor round in ")))).toBe(true);
    expect(VERIFIED_KILL_SCRIPT).toContain(`exit ${KILL_NOT_VERIFIED_EXIT_CODE}`);
    expect(verifiedKillArgv(12)).toEqual(["/bin/bash", "-c", VERIFIED_KILL_SCRIPT, "sbx-kill", "12"]);
  });

  it.runIf(process.platform === "linux")("kills a forking, setsid, double-forking tree on this host and verifies it", async () => {
    const run = promisify(execFile);
    // The tree: a session leader that starts a background sleeper, a setsid child, and a double fork.
    const child = execFile("setsid", [
      "sh",
      "-c",
      `sleep 60710 & setsid sh -c "sleep 60711 & exec sleep 60712" & ( ( sleep 60713 & ) & ) ; exec sleep 60714`,
    ]);
    await new Promise((resolve) => setTimeout(resolve, 500));
    const root = child.pid!;
    const { stdout: before } = await run("sh", ["-c", `ps -eo pid,sid,ppid,args | grep -c '[s]leep 6071[0-4]' || true`]);
    expect(Number(before.trim())).toBe(5);
    await run(verifiedKillArgv(root)[0]!, verifiedKillArgv(root).slice(1));
    await new Promise((resolve) => setTimeout(resolve, 100));
    const { stdout: after } = await run("sh", ["-c", `ps -eo stat,args | grep '[s]leep 6071[0-4]' | grep -v '^Z' | wc -l`]);
    expect(Number(after.trim())).toBe(0);
  });
});
