import { readFileSync } from "node:fs";
import { isSbxError, type CommandHandle } from "@sbx/core";
import { expect, it } from "vitest";
import { createTestSandbox, describeWithDocker, docker } from "./docker-test-environment.js";

// adr/0036: a command's kill reports that nothing of the command is left (`kill()` resolving, `killed: true`) only
// when that is so. The audit tag (ADR 0012) cannot follow code the command runs in *another* untagged process of the
// sandbox user through ptrace. The attacker below tries every untagged process of its uid it sees: the agent and the
// file helper must refuse it (non-dumpable, another gid), and a command's shell caught in the moment before its tag
// write (which no credential can close) must be found by the kill's check, or the sandbox ended, never left alive.

const FIXTURE = readFileSync(new URL("./fixtures/ptrace-escape.py", import.meta.url), "utf8");
/** The hijacked processes' argument; searched for as `4242[.]7` so the search never matches itself. */
const MARK = "4242.7";
/** Commands started while the attacker watches: each one's shell passes through the untagged moment once. */
const VICTIMS = 24;

/** Waits for `condition`, polling, up to `limitMs` (generous: the machine may be loaded); false if it never held. */
async function waitFor(condition: () => boolean, limitMs: number): Promise<boolean> {
  for (const started = Date.now(); Date.now() - started < limitMs;) {
    if (condition()) return true;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return condition();
}

interface Target {
  readonly pid: number;
  readonly gid: number;
  readonly dumpable: boolean;
  readonly result: string;
  readonly command: string;
}

function targetsIn(output: string): Target[] {
  return [...output.matchAll(/^target (\d+) (\d+) ([01]) (\S+) (\S+)$/gm)].map((match) => ({
    pid: Number(match[1]),
    gid: Number(match[2]),
    dumpable: match[3] === "1",
    result: match[4]!,
    command: match[5]!,
  }));
}

describeWithDocker("a command that ptraces another process of the sandbox user (adr/0036)", () => {
  for (const agentCommands of ["off", "start"] as const) {
    it(`cannot attach to sbx's own processes, and nothing it hijacks outlives its verified kill (commands: ${agentCommands})`, async () => {
      await using sandbox = await createTestSandbox({}, { agentCommands });
      await sandbox.files.write("escape.py", FIXTURE);
      await sandbox.commands.run("head -c 16777216 /dev/zero > big.bin");
      // A stream read the host holds open: sbx's file helper stays alive (blocked on its full pipe) while we attack.
      const held = await sandbox.files.read("big.bin", { format: "stream" });
      let output = "";
      const attacker = await sandbox.commands.start(`python3 escape.py ${MARK} 600`, { onStdout: (text) => (output += text) });
      expect(await waitFor(() => output.includes("ready\n"), 120_000), `the attacker never finished its first look: ${output}`).toBe(true);
      const first = targetsIn(output);
      // The file helper (its own gid, ADR 0031) was there from the start, and refused the attach.
      const helpers = first.filter((target) => target.gid === 2147483646);
      expect(helpers.length, `the held read's helper was not seen: ${output}`).toBeGreaterThan(0);
      expect(helpers.map((target) => target.result)).toEqual(helpers.map(() => "EPERM"));
      // On the agent path the agent (non-dumpable, ADR 0025) was there too, and refused it.
      if (agentCommands === "start") {
        const agents = first.filter((target) => !target.dumpable && target.gid === 10001 && target.command.startsWith("python3"));
        expect(agents.length, `the agent was not seen: ${output}`).toBeGreaterThan(0);
        expect(agents.map((target) => target.result)).toEqual(agents.map(() => "EPERM"));
      }
      // Commands started now: each one's shell is untagged for a moment after its execve; the attacker stops and
      // takes over each one it catches (turned into `sleep 4242.7`, an untagged process running its code).
      const victims: CommandHandle[] = [];
      for (let index = 0; index < VICTIMS; index++) victims.push(await sandbox.commands.start("true"));
      // Victims it did not take over end on their own; the ones it took over sleep. Bounded, not a race: either way
      // the moment each victim was catchable has passed once this settles.
      await Promise.race([Promise.allSettled(victims.map((victim) => victim.wait())), new Promise((resolve) => setTimeout(resolve, 60_000))]);
      const targets = targetsIn(output);
      // Every process sbx keeps untagged refused the attach: another gid, or not dumpable.
      const protectedTargets = targets.filter((target) => target.gid !== 10001 || !target.dumpable);
      // (ESRCH: a short-lived one, such as a file helper of the set-up, ended before the attempt.)
      expect(
        protectedTargets.filter((target) => target.result !== "EPERM" && target.result !== "ESRCH"),
        "sbx's own untagged processes must refuse ptrace",
      ).toEqual([]);
      const hijacked = targets.filter((target) => target.result === "hijacked");
      console.log(
        `[ptrace-escape ${agentCommands}] ${targets.length} untagged processes tried, ${hijacked.length} taken over in the moment before their tag`,
      );
      // Drain the held read first: the engine stalls every exec of a container while an exec whose output the host
      // holds back is killed (adr/0030), which would hide the kill's outcome. The helper was never ours: it completes.
      expect((await new Response(held).arrayBuffer()).byteLength).toBe(16 * 1024 * 1024);

      const kill = await attacker.kill().then(
        () => "verified" as const,
        (error: unknown) => error,
      );
      console.log(`[ptrace-escape ${agentCommands}] kill: ${kill instanceof Error ? kill.message : String(kill)}`);
      if (isSbxError(kill, "SBX_SANDBOX_NOT_FOUND")) {
        // sbx could not verify and ended the sandbox: the other honest outcome, which it must say. It is gone for real.
        expect(kill.message).toMatch(/sbx ended it because .*untagged process/);
        await expect(sandbox.commands.run("true")).rejects.toMatchObject({ code: "SBX_SANDBOX_NOT_FOUND" });
        return;
      }
      expect(kill instanceof Error ? kill.message : kill, "kill() resolving claims that nothing of the command is left").toBe("verified");
      expect((await attacker.wait()).exitCode).toBe(137);
      const survivors = await sandbox.commands.run("grep -sla '4242[.]7' /proc/[0-9]*/cmdline || true");
      expect(survivors.stdout, "processes running the killed command's code after a verified kill").toBe("");
    });
  }

  // What a hijack leaves, made deterministically behind the adapter's back (an exec the engine starts as the sandbox
  // user, untagged like every exec): the check after the kill must find it whether or not it is dumpable.
  for (const dumpable of [true, false]) {
    it(`a kill ends the sandbox, and says so, when an untagged process of the sandbox user stays (${dumpable ? "dumpable" : "non-dumpable"})`, async () => {
      await using sandbox = await createTestSandbox();
      const program = `import ctypes, time\n${dumpable ? "" : "ctypes.CDLL(None).prctl(4, 0, 0, 0, 0)\n"}time.sleep(600)`;
      const stray = await docker
        .getContainer(sandbox.id)
        .exec({ Cmd: ["python3", "-c", program], User: "10001:10001", AttachStdout: false, AttachStderr: false });
      await stray.start({ Detach: true });
      let running = false;
      for (const started = Date.now(); !running && Date.now() - started < 60_000;) {
        running = (await sandbox.commands.run("grep -sl 'time[.]sleep(600)' /proc/[0-9]*/cmdline || true")).stdout.trim() !== "";
      }
      expect(running, "the stray process never started").toBe(true);
      const command = await sandbox.commands.start("sleep 600");
      const kill = await command.kill().then(
        () => "verified" as const,
        (error: unknown) => error,
      );
      expect(isSbxError(kill, "SBX_SANDBOX_NOT_FOUND"), `kill() must not claim a verified kill: ${String(kill)}`).toBe(true);
      expect((kill as Error).message).toMatch(/sbx ended it because 1 untagged process/);
    });
  }
});
