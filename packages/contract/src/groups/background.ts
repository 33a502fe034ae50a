import { expect } from "vitest";
import {
  describeGroup,
  expectCapabilityRefused,
  expectSbxError,
  type ContractHarness,
  type SandboxContractOptions,
  type SandboxProviderFactoryForContract,
} from "../harness.js";

async function collect(stream: AsyncIterable<string>): Promise<string> {
  let text = "";
  for await (const chunk of stream) text += chunk;
  return text;
}

/** Registers the background command tests (`commands.start()`), or their refusal when BACKGROUND_COMMANDS is off. */
export function registerBackgroundCommandsTests(harness: ContractHarness): void {
  const { contractTest, capabilities } = harness;

  if (!capabilities.BACKGROUND_COMMANDS) {
    contractTest("background.refused", "commands.start() raises SBX_CAPABILITY_NOT_SUPPORTED when BACKGROUND_COMMANDS is off", async () => {
      await using sandbox = await harness.createSandbox();
      await expectCapabilityRefused(harness, () => sandbox.commands.start("echo x"), "BACKGROUND_COMMANDS");
    });
    return;
  }

  contractTest("background.start-wait", "start() returns a handle with a pid; wait() gives the result", async () => {
    await using sandbox = await harness.createSandbox();
    const handle = await sandbox.commands.start("echo first; sleep 0.2; echo second; exit 4");
    expect(typeof handle.pid).toBe("string");
    expect(handle.pid.length).toBeGreaterThan(0);
    const result = await handle.wait();
    expect(result.exitCode).toBe(4);
    expect(result.stdout).toBe("first\nsecond\n");
  });

  contractTest(
    "background.live-process-limit",
    "a command past maxLiveProcesses is refused with SBX_TOO_MANY_PROCESSES (not retryable, nothing started), a finished one frees its slot, and the bound is in the audit record",
    async () => {
      await using sandbox = await harness.createSandbox({ maxLiveProcesses: 2 });
      const first = await sandbox.commands.start("sleep 30");
      await sandbox.commands.start("sleep 30");
      const refused = await expectSbxError(() => sandbox.commands.start("echo refused > refused-marker.txt"), "SBX_TOO_MANY_PROCESSES");
      expect(refused.retryable, "a refusal past the bound is not retryable as such").toBe(false);
      expect(sandbox.audit().policies.processes?.applied, "the audit record's policies.processes").toEqual({ maxLiveProcesses: 2 });
      await first.kill();
      await first.wait().catch(() => undefined);
      const check = await sandbox.commands.run("test -e refused-marker.txt && echo started || echo nothing");
      expect(check.stdout, "the refused command must not have run").toBe("nothing\n");
    },
  );

  contractTest("background.stdout-iterable", "handle.stdout and handle.stderr are async iterables of the output, in order", async () => {
    await using sandbox = await harness.createSandbox();
    const handle = await sandbox.commands.start("for i in 1 2 3; do echo out-$i; echo err-$i 1>&2; sleep 0.1; done");
    const [stdout, stderr, result] = await Promise.all([collect(handle.stdout), collect(handle.stderr), handle.wait()]);
    expect(stdout).toBe("out-1\nout-2\nout-3\n");
    expect(stderr).toBe("err-1\nerr-2\nerr-3\n");
    expect(result.exitCode).toBe(0);
  });

  contractTest(
    "background.kill",
    "kill() stops a running command and its children; wait() then resolves with exit code 137; kill twice is safe",
    async () => {
      await using sandbox = await harness.createSandbox();
      const handle = await sandbox.commands.start("echo started; (sleep 3; echo leaked > background-marker.txt) & sleep 30");
      const iterator = handle.stdout[Symbol.asyncIterator]();
      const first = await iterator.next();
      expect(first.value).toContain("started");
      await handle.kill();
      await handle.kill();
      const result = await handle.wait();
      // The documented exit code of a killed command: 128 + SIGKILL (CommandHandle.wait).
      expect(result.exitCode).toBe(137);
      await new Promise((resolve) => setTimeout(resolve, 4000));
      expect(
        await sandbox.files.exists("background-marker.txt"),
        "background-marker.txt exists: a child of the killed background command survived and wrote it",
      ).toBe(false);
    },
  );

  if (capabilities.STDIN) {
    contractTest("background.stdin", "writeStdin() and closeStdin() feed a running command", async () => {
      await using sandbox = await harness.createSandbox();
      const handle = await sandbox.commands.start("cat", { stdin: true });
      await handle.writeStdin("first ");
      await handle.writeStdin(new TextEncoder().encode("second"));
      await handle.closeStdin();
      const result = await handle.wait();
      expect(result.stdout).toBe("first second");
      await expectSbxError(() => handle.writeStdin("after close"), "SBX_INVALID_ARGUMENT");
    });
  } else {
    contractTest("background.stdin-refused", "start() with stdin raises SBX_CAPABILITY_NOT_SUPPORTED when STDIN is off", async () => {
      await using sandbox = await harness.createSandbox();
      await expectCapabilityRefused(harness, () => sandbox.commands.start("cat", { stdin: true }), "STDIN");
    });
  }
}

/** The background commands group on its own. */
export function describeBackgroundCommandsContract(name: string, factory: SandboxProviderFactoryForContract, options?: SandboxContractOptions): void {
  describeGroup("background commands", name, factory, options, registerBackgroundCommandsTests);
}
