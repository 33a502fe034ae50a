import { Sandbox as CodeInterpreterSandbox } from "@e2b/code-interpreter";
import { describe, expect, it } from "vitest";
import { skipDockerTests } from "./docker-availability.js";
import { emulatorForSuite } from "./emulator-fixture.js";
import { sdkVersions } from "./sdk-versions.js";

/**
 * A sandbox that ends while a call is in flight, as upstream's own tests expect it (e2b-dev/E2B
 * packages/js-sdk/tests/sandbox/commands/sandboxKilledDuringRun.test.ts, e2b-dev/code-interpreter
 * js/tests/killedSandbox.test.ts): the connection drops with no end frame and no exit code, the SDK probes
 * `/health` (502 once the sandbox is gone) and raises its TimeoutError saying the sandbox was killed.
 */
const KILLED_MID_REQUEST = /sandbox was killed or reached its end of life while the request was in flight/;

describe.skipIf(skipDockerTests)("a sandbox that ends while a call is in flight", () => {
  const emulator = emulatorForSuite();

  describe.each(sdkVersions)("%s", (_label, Sandbox) => {
    it("killed (from elsewhere) while a background command runs: wait() rejects with the SDK's TimeoutError, not an exit code", async () => {
      const sandbox = await Sandbox.create(emulator().connectionOptions);
      const command = await sandbox.commands.run("sleep 60", { background: true });
      expect(await Sandbox.kill(sandbox.sandboxId, emulator().connectionOptions)).toBe(true);
      const outcome = await command.wait().catch((error: unknown) => error);
      expect(outcome).toMatchObject({ name: "TimeoutError", message: expect.stringMatching(KILLED_MID_REQUEST) });
    });

    it("killed while a foreground command streams output: run() rejects with the same error", async () => {
      const sandbox = await Sandbox.create(emulator().connectionOptions);
      const lines: string[] = [];
      const running = sandbox.commands.run("for i in $(seq 600); do echo tick $i; sleep 0.1; done", { onStdout: (line) => void lines.push(line) });
      running.catch(() => undefined);
      for (let attempt = 0; attempt < 100 && lines.length === 0; attempt++) await new Promise((resolve) => setTimeout(resolve, 50));
      expect(lines[0]).toBe("tick 1\n");
      await sandbox.kill();
      await expect(running).rejects.toMatchObject({ name: "TimeoutError", message: expect.stringMatching(KILLED_MID_REQUEST) });
      // A command started after the end gets the edge proxy's 502: the SDK's SandboxNotFoundError; other calls its TimeoutError.
      await expect(sandbox.commands.run("true")).rejects.toMatchObject({
        name: "SandboxNotFoundError",
        message: expect.stringMatching(/not running anymore/),
      });
      await expect(sandbox.files.read("/etc/hostname")).rejects.toMatchObject({
        name: "TimeoutError",
        message: expect.stringMatching(/sandbox timeout/),
      });
      expect(await sandbox.isRunning()).toBe(false);
    });

    it("reaching its end of life during a command fails the command the same way", async () => {
      const sandbox = await Sandbox.create({ ...emulator().connectionOptions, timeoutMs: 3_000 });
      const outcome = await sandbox.commands.run("sleep 60").catch((error: unknown) => error);
      expect(outcome).toMatchObject({ name: "TimeoutError", message: expect.stringMatching(KILLED_MID_REQUEST) });
    });
  });

  it("killed during runCode: the code interpreter SDK raises its TimeoutError saying the sandbox was killed", async () => {
    const sandbox = await CodeInterpreterSandbox.create(emulator().connectionOptions);
    const stdout: string[] = [];
    const execution = sandbox.runCode("import time\nprint('started', flush=True)\ntime.sleep(300)", {
      timeoutMs: 300_000,
      onStdout: (message) => void stdout.push(message.line),
    });
    execution.catch(() => undefined);
    for (let attempt = 0; attempt < 200 && stdout.length === 0; attempt++) await new Promise((resolve) => setTimeout(resolve, 50));
    expect(stdout).toEqual(["started\n"]);
    await sandbox.kill();
    await expect(execution).rejects.toMatchObject({
      name: "TimeoutError",
      message: expect.stringMatching(/sandbox was killed while the request was in progress/),
    });
  });
});
