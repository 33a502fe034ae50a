import { expect } from "vitest";
import {
  delay,
  describeGroup,
  expectCapabilityRefused,
  expectSbxError,
  type ContractHarness,
  type SandboxContractOptions,
  type SandboxProviderFactoryForContract,
} from "../harness.js";

/** How long `pause.no-progress` keeps the sandbox paused. */
export const PAUSED_FOR_MS = 5_000;
/**
 * The gap the paused process's own step log must show: steps are 100 ms apart while it runs, so a gap this long is
 * the pause (a process that kept running, even on a loaded machine, never stalls for 4 s between two steps).
 */
export const PAUSE_GAP_MS = 4_000;

/**
 * A Python process that appends `<step> <wall time in ms>` to `pause-steps.txt` every 100 ms, counting in memory: after
 * a pause its next step continues the count (memory kept), and its wall times show the gap (no progress while paused).
 */
const STEPPER = [
  "import time",
  "n = 0",
  "while True:",
  "    n += 1",
  "    with open('pause-steps.txt', 'a') as f:",
  "        f.write('%d %d\\n' % (n, int(time.time() * 1000)))",
  "    time.sleep(0.1)",
].join("\n");

/** Reads the step log: `[step, wall ms]` pairs, complete lines only. */
function parseSteps(text: string): Array<[number, number]> {
  return text
    .split("\n")
    .filter((line) => /^\d+ \d+$/.test(line))
    .map((line) => line.split(" ").map(Number) as [number, number]);
}

/** Registers the pause tests (`PAUSE`), or their refusal when it is off (ADR 0055). */
export function registerPauseTests(harness: ContractHarness): void {
  const { contractTest, capabilities } = harness;

  if (!capabilities.PAUSE) {
    contractTest("pause.refused", "sandbox.pause() and resume() raise SBX_CAPABILITY_NOT_SUPPORTED when PAUSE is off", async () => {
      await using sandbox = await harness.createSandbox();
      await expectCapabilityRefused(harness, () => sandbox.pause(), "PAUSE");
      await expectCapabilityRefused(harness, () => sandbox.resume(), "PAUSE");
      expect(sandbox.paused).toBe(false);
      expect((await sandbox.commands.run("echo still here")).stdout).toBe("still here\n");
    });
    return;
  }

  contractTest(
    "pause.no-progress",
    "a paused sandbox's process makes no progress and keeps its memory: its own step log shows the pause as a gap, and the count goes on after resume",
    async () => {
      await using sandbox = await harness.createSandbox({ timeoutMs: 120_000 });
      await sandbox.files.write("stepper.py", STEPPER);
      const stepper = await sandbox.commands.start("exec python3 stepper.py", { timeoutMs: 110_000 });
      const startedAt = Date.now();
      while ((await sandbox.files.exists("pause-steps.txt")) === false && Date.now() - startedAt < 30_000) await delay(200);
      await delay(500);
      await sandbox.pause();
      expect(sandbox.paused).toBe(true);
      await delay(PAUSED_FOR_MS);
      await sandbox.resume();
      expect(sandbox.paused).toBe(false);
      await delay(1_500);
      const steps = parseSteps(await sandbox.files.read("pause-steps.txt"));
      await stepper.kill();
      // Memory kept: the count never restarts, every step follows the one before.
      expect(steps.length).toBeGreaterThan(3);
      steps.forEach(([step], index) => expect(step).toBe(index + 1));
      // No progress while paused: one gap of at least PAUSE_GAP_MS between two consecutive steps, and steps after it.
      const gaps = steps.slice(1).map(([, at], index) => at - steps[index]![1]);
      const longest = Math.max(...gaps);
      expect(longest, `gaps between steps: ${gaps.join(", ")}`).toBeGreaterThanOrEqual(PAUSE_GAP_MS);
      expect(gaps.indexOf(longest), "steps after the pause").toBeLessThan(gaps.length - 1);
      const audit = sandbox.audit().policies.pauses;
      expect((audit?.applied as Array<{ action: string }>).map((change) => change.action)).toEqual(["pause", "resume"]);
      expect(String(audit?.enforcement)).toContain("sandbox.pause");
    },
  );

  if (capabilities.STATEFUL_CODE) {
    contractTest("pause.code-state-kept", "a value in a running code context survives a pause and a resume", async () => {
      await using sandbox = await harness.createSandbox();
      const context = await sandbox.createCodeContext();
      await sandbox.runCode("kept = 'pause-' + str(6 * 7)", { contextId: context.id });
      await sandbox.pause();
      await delay(1_000);
      await sandbox.resume();
      const execution = await sandbox.runCode("print(kept)", { contextId: context.id });
      expect(execution.error).toBeNull();
      expect(execution.stdout).toBe("pause-42\n");
    });
  }

  contractTest(
    "pause.calls-refused",
    "while paused, commands, code and file calls are refused with SBX_SANDBOX_PAUSED (not retryable); pause and resume are idempotent; all works after resume",
    async () => {
      await using sandbox = await harness.createSandbox();
      await sandbox.files.write("kept.txt", "kept");
      const background =
        capabilities.BACKGROUND_COMMANDS && capabilities.STDIN ? await sandbox.commands.start("cat >/dev/null", { stdin: true }) : undefined;
      await sandbox.resume();
      expect(sandbox.paused).toBe(false);
      await sandbox.pause();
      await sandbox.pause();
      const refusals = [
        () => sandbox.commands.run("echo paused"),
        () => sandbox.runCode("print(1)"),
        () => sandbox.files.read("kept.txt"),
        () => sandbox.files.write("new.txt", "x"),
        () => sandbox.files.list("."),
        () => sandbox.files.exists("kept.txt"),
        ...(background ? [() => background.writeStdin("x\n")] : []),
        ...(capabilities.BACKGROUND_COMMANDS ? [() => sandbox.commands.start("sleep 1")] : []),
        ...(capabilities.PTY ? [() => sandbox.terminals.create({ command: "sh", onData: () => {} })] : []),
      ];
      for (const refused of refusals) {
        const error = await expectSbxError(refused, "SBX_SANDBOX_PAUSED");
        expect(error.retryable).toBe(false);
      }
      expect(sandbox.closed).toBe(false);
      expect(sandbox.audit().policies.pauses).toBeDefined();
      await sandbox.resume();
      await sandbox.resume();
      expect((await sandbox.commands.run("cat kept.txt")).stdout).toBe("kept");
      expect(await sandbox.files.read("kept.txt")).toBe("kept");
      await background?.kill();
    },
  );

  contractTest("pause.lifetime-runs", "the lifetime keeps running while paused: a paused sandbox ends at its deadline", async () => {
    // Long enough that the pause finishes before the end on a loaded machine.
    const sandbox = await harness.createSandbox({ timeoutMs: 15_000 });
    await sandbox.pause();
    const end = await sandbox.ended;
    expect(end.reason).toBe("lifetime");
    await expectSbxError(() => sandbox.commands.run("echo after"), "SBX_SANDBOX_NOT_FOUND");
    await sandbox.kill();
  });

  contractTest("pause.kill-while-paused", "kill() ends a paused sandbox, and a command that ran in it settles", async () => {
    const sandbox = await harness.createSandbox();
    const running = capabilities.BACKGROUND_COMMANDS ? await sandbox.commands.start("sleep 300") : undefined;
    await sandbox.pause();
    await sandbox.kill();
    expect(sandbox.closed).toBe(true);
    expect((await sandbox.ended).reason).toBe("killed");
    await expectSbxError(() => sandbox.commands.run("echo after"), "SBX_SANDBOX_CLOSED");
    if (running) {
      const settled = await running.wait().then(
        (result) => `exit ${result.exitCode}`,
        (error: unknown) => `error ${String(error)}`,
      );
      expect(settled).not.toBe("exit 0");
    }
  });
}

/** The pause group on its own. */
export function describePauseContract(name: string, factory: SandboxProviderFactoryForContract, options?: SandboxContractOptions): void {
  describeGroup("pause", name, factory, options, registerPauseTests);
}
