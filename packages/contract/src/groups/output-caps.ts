import { expect } from "vitest";
import {
  describeGroup,
  expectSbxError,
  type ContractHarness,
  type SandboxContractOptions,
  type SandboxProviderFactoryForContract,
} from "../harness.js";
import { printBytesCommand } from "./commands.js";

/** Bytes each flood prints: far past the cap, small enough for every backend to produce quickly. */
const FLOOD_BYTES = 16 * 1024 * 1024;
/** The cap the floods run under. */
const CAP_BYTES = 64 * 1024;

/** Python printing `FLOOD_BYTES` bytes of "x" in 64 KiB writes. */
const PYTHON_FLOOD = `import sys\nblock = "x" * 65536\nfor _ in range(${FLOOD_BYTES / 65536}):\n    sys.stdout.write(block)\nsys.stdout.flush()\n`;

/** Registers the output-cap tests: what a sandbox prints is capped on every path into the host. */
export function registerOutputCapsTests(harness: ContractHarness): void {
  const { contractTest } = harness;

  contractTest("output-caps.commands-flood", "a command flooding stdout keeps exactly outputLimitBytes and counts every byte", async () => {
    await using sandbox = await harness.createSandbox();
    const result = await sandbox.commands.run(printBytesCommand(FLOOD_BYTES), { outputLimitBytes: CAP_BYTES });
    expect(result.exitCode).toBe(0);
    expect(result.stdout.length).toBe(CAP_BYTES);
    expect(result.stdoutBytes.byteLength).toBe(CAP_BYTES);
    expect(result.truncated).toEqual({ stdout: true, stderr: false });
    expect(result.totalBytes.stdout).toBe(FLOOD_BYTES);
  });

  contractTest(
    "output-caps.run-code-flood",
    "runCode flooding stdout is capped like a command: outputLimitBytes, truncated and totalBytes",
    async () => {
      await using sandbox = await harness.createSandbox();
      let streamed = 0;
      const execution = await sandbox.runCode(PYTHON_FLOOD, { outputLimitBytes: CAP_BYTES, onStdout: (text) => (streamed += text.length) });
      expect(execution.error).toBeNull();
      expect(execution.stdout.length).toBe(CAP_BYTES);
      expect(execution.stdout).toBe("x".repeat(CAP_BYTES));
      expect(execution.truncated).toEqual({ stdout: true, stderr: false, results: false });
      expect(execution.totalBytes).toEqual({ stdout: FLOOD_BYTES, stderr: 0 });
      expect(streamed).toBe(FLOOD_BYTES);
      expect(
        execution.outOfMemoryKilled === null || execution.outOfMemoryKilled === false,
        `outOfMemoryKilled is null or false for an output flood (got ${String(execution.outOfMemoryKilled)})`,
      ).toBe(true);
    },
  );

  contractTest("output-caps.run-code-default-cap", "runCode without outputLimitBytes keeps the 16 MiB default, like commands", async () => {
    await using sandbox = await harness.createSandbox();
    const execution = await sandbox.runCode(`import sys\nblock = "y" * 65536\nfor _ in range(272):\n    sys.stdout.write(block)\n`);
    expect(execution.stdout.length).toBe(16 * 1024 * 1024);
    expect(execution.truncated.stdout, "truncated.stdout after a flood past the cap").toBe(true);
    expect(execution.totalBytes.stdout).toBe(272 * 65536);
  });

  contractTest(
    "output-caps.throwing-callback",
    "an onStdout callback that throws becomes CallbackError on the call, never an uncaught exception",
    async () => {
      await using sandbox = await harness.createSandbox();
      const uncaught: unknown[] = [];
      const onUncaught = (error: unknown) => uncaught.push(error);
      process.on("uncaughtException", onUncaught);
      process.on("unhandledRejection", onUncaught);
      try {
        const commandError = await expectSbxError(
          () =>
            sandbox.commands.run("echo first; sleep 0.2; echo second; sleep 30", {
              timeoutMs: 60_000,
              onStdout: () => {
                throw new RangeError("callback defect");
              },
            }),
          "SBX_CALLBACK_FAILED",
        );
        expect((commandError as { callback?: string }).callback).toBe("onStdout");
        expect((commandError.cause as Error).message).toBe("callback defect");
        const codeError = await expectSbxError(
          () =>
            sandbox.runCode("print('first', flush=True)\nimport time\ntime.sleep(30)", {
              timeoutMs: 60_000,
              onStdout: () => {
                throw new RangeError("code callback defect");
              },
            }),
          "SBX_CALLBACK_FAILED",
        );
        expect((codeError as { callback?: string }).callback).toBe("onStdout");
        // The sandbox stays usable.
        expect((await sandbox.commands.run("echo still-here")).stdout).toBe("still-here\n");
        await new Promise((resolve) => setTimeout(resolve, 200));
        expect(uncaught).toEqual([]);
      } finally {
        process.off("uncaughtException", onUncaught);
        process.off("unhandledRejection", onUncaught);
      }
    },
  );
}

/** The output-caps group on its own. */
export function describeOutputCapsContract(name: string, factory: SandboxProviderFactoryForContract, options?: SandboxContractOptions): void {
  describeGroup("output caps", name, factory, options, registerOutputCapsTests);
}
