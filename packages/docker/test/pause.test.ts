/**
 * Pause and resume on Docker (ADR 0055): every process of the sandbox user stopped and verified stopped, while the
 * root deadline and the dead-man's switch (other uids) run on. Measured from inside and from the engine: processes
 * that keep continuing each other are stopped all the same, a paused sandbox ends at its deadline (default and root
 * sandboxes) and with its SIGKILLed host, and `kill()` of a paused sandbox removes its container. The portable tests
 * (no progress, memory kept, calls refused, lifetime, kill) are the contract group, run here on Docker.
 */
import { spawn } from "node:child_process";
import { once } from "node:events";
import { fileURLToPath } from "node:url";
import { createSandboxProvider } from "../src/index.js";
import { describePauseContract } from "@sbx/contract";
import { expect, it } from "vitest";
import { createTestSandbox, describeWithDocker, docker, TEST_IMAGE } from "./docker-test-environment.js";

describePauseContract("docker", () => createSandboxProvider({ image: TEST_IMAGE }));

/** True while the container exists and runs. */
async function running(id: string): Promise<boolean> {
  try {
    return (await docker.getContainer(id).inspect()).State.Running;
  } catch (error) {
    if ((error as { statusCode?: number }).statusCode === 404) return false;
    throw error;
  }
}

/** Polls until the container is gone or `deadline` (epoch ms) passes; true when it was seen gone. */
async function goneBy(id: string, deadline: number): Promise<boolean> {
  while (Date.now() < deadline) {
    if (!(await running(id))) return true;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  return !(await running(id));
}

/**
 * Eight processes that send SIGCONT to every process of their uid in a tight loop (`kill(-1, SIGCONT)`), each logging
 * its wall time in ms every 50 ms, and a ninth that forks without pause (each child sends the same SIGCONT and exits),
 * logging the same way: the attacks on a stop-based pause, where one process left running (or born during the stop)
 * continues the rest.
 */
const CONTINUERS = [
  "import os, signal, time",
  "forker = os.fork() == 0",
  "if not forker:",
  "    for _ in range(3):",
  "        os.fork()",
  "log = open('continuer-%s%d.txt' % ('forker-' if forker else '', os.getpid()), 'a', buffering=1)",
  "last = 0",
  "while True:",
  "    if forker:",
  "        child = os.fork()",
  "        if child == 0:",
  "            try:",
  "                os.kill(-1, signal.SIGCONT)",
  "            finally:",
  "                os._exit(0)",
  "        os.waitpid(child, 0)",
  "    else:",
  "        try:",
  "            os.kill(-1, signal.SIGCONT)",
  "        except OSError:",
  "            pass",
  "    now = int(time.time() * 1000)",
  "    if now - last >= 50:",
  "        log.write('%d\\n' % now)",
  "        last = now",
].join("\n");

describeWithDocker("pause on Docker", () => {
  it(
    "processes that continue every process of their uid in a loop, and one that forks without pause, are all stopped while paused, and run again after resume",
    { timeout: 180_000 },
    async () => {
      await using sandbox = await createTestSandbox({ timeoutMs: 170_000 });
      await sandbox.files.write("continuers.py", CONTINUERS);
      const attack = await sandbox.commands.start("exec python3 continuers.py", { timeoutMs: 160_000 });
      const startedAt = Date.now();
      const logs = async () => (await sandbox.files.list(".")).filter((entry) => entry.name.startsWith("continuer-")).map((entry) => entry.name);
      while ((await logs()).length < 9 && Date.now() - startedAt < 60_000) await new Promise((resolve) => setTimeout(resolve, 300));
      expect((await logs()).length).toBe(9);
      await sandbox.pause();
      await new Promise((resolve) => setTimeout(resolve, 5_000));
      await sandbox.resume();
      await new Promise((resolve) => setTimeout(resolve, 1_500));
      // The writers end before their logs are read: a file still growing fails sbx's exact read (as it must).
      await attack.kill();
      for (const name of await logs()) {
        const times = (await sandbox.files.read(name))
          .split("\n")
          .filter((line) => /^\d+$/.test(line))
          .map(Number);
        const gaps = times.slice(1).map((at, index) => at - times[index]!);
        const longest = Math.max(...gaps);
        // Stopped for the whole pause (5 s): one gap of at least 4 s, and lines after it (it runs again).
        expect(longest, `${name}: gaps ${gaps.join(",")}`).toBeGreaterThanOrEqual(4_000);
        expect(gaps.indexOf(longest), `${name} ran after resume`).toBeLessThan(gaps.length - 1);
      }
    },
  );

  for (const user of ["default", "root"] as const) {
    it(`a paused ${user} sandbox still ends at its deadline: its container is gone within 10 s of the lifetime`, { timeout: 90_000 }, async () => {
      // Long enough that create, a command and the pause finish before the end on a loaded machine (at load 49, 8 s was not).
      const sandbox = await createTestSandbox({ timeoutMs: 20_000, user });
      const createdAt = Date.now();
      try {
        await sandbox.commands.start("sleep 300");
        await sandbox.pause();
        expect(sandbox.paused).toBe(true);
        expect(await running(sandbox.id)).toBe(true);
        expect(await goneBy(sandbox.id, createdAt + 20_000 + 10_000)).toBe(true);
        expect((await sandbox.ended).reason).toBe("lifetime");
      } finally {
        await sandbox.kill().catch(() => {});
      }
    });
  }

  it(
    "a host process SIGKILLed while its sandbox is paused leaves no container behind within 30 s (the dead-man's switch runs on)",
    { timeout: 120_000 },
    async () => {
      const child = spawn(process.execPath, [fileURLToPath(new URL("./fixtures/create-pause-and-hang.mjs", import.meta.url))], {
        cwd: fileURLToPath(new URL("..", import.meta.url)),
        stdio: ["ignore", "pipe", "inherit"],
        env: { ...process.env },
      });
      let output = "";
      child.stdout.setEncoding("utf8");
      child.stdout.on("data", (text: string) => (output += text));
      let id = "";
      try {
        while (!output.includes("\n")) {
          if (child.exitCode !== null) throw new Error(`the host child exited early with ${child.exitCode}`);
          await new Promise((resolve) => setTimeout(resolve, 100));
        }
        const report = JSON.parse(output) as { id: string; paused: boolean };
        id = report.id;
        expect(report.paused).toBe(true);
        expect(await running(id)).toBe(true);
        child.kill("SIGKILL");
        await once(child, "exit");
        expect(await goneBy(id, Date.now() + 30_000)).toBe(true);
      } finally {
        child.kill("SIGKILL");
        if (id)
          await docker
            .getContainer(id)
            .remove({ force: true, v: true })
            .catch(() => undefined);
      }
    },
  );

  it("kill() of a paused sandbox removes its container, verified by the engine", { timeout: 90_000 }, async () => {
    const sandbox = await createTestSandbox({ timeoutMs: 80_000 });
    await sandbox.commands.start("sleep 300");
    await sandbox.pause();
    await sandbox.kill();
    expect(await goneBy(sandbox.id, Date.now() + 15_000)).toBe(true);
  });

  it(
    "a pause longer than the agent's 10 s heartbeat keeps the agent and the commands it carries (the heartbeat is held)",
    { timeout: 120_000 },
    async () => {
      await using sandbox = await createTestSandbox({ timeoutMs: 110_000 });
      const context = await sandbox.createCodeContext();
      await sandbox.runCode("kept = 7", { contextId: context.id });
      // The agent runs, so this command goes through it, and the heartbeat pings the agent while it runs.
      const command = await sandbox.commands.start("sleep 60; echo done", { timeoutMs: 100_000 });
      let settled = "";
      command.wait().then(
        (result) => (settled = `exit ${result.exitCode}`),
        (error: unknown) => (settled = `error ${String(error)}`),
      );
      await sandbox.pause();
      await new Promise((resolve) => setTimeout(resolve, 14_000));
      await sandbox.resume();
      await new Promise((resolve) => setTimeout(resolve, 3_000));
      expect(settled).toBe("");
      expect((await sandbox.runCode("print(kept)", { contextId: context.id })).stdout).toBe("7\n");
      await command.kill();
    },
  );

  it("the audit record says how the pause is enforced", { timeout: 90_000 }, async () => {
    await using sandbox = await createTestSandbox({ timeoutMs: 80_000 });
    await sandbox.pause();
    await sandbox.resume();
    const pauses = sandbox.audit().policies.pauses!;
    expect(String(pauses.enforcement)).toContain("SIGSTOP");
    expect((pauses.applied as Array<{ action: string }>).map((change) => change.action)).toEqual(["pause", "resume"]);
  });
});
