import type { Sandbox } from "@sbx/core";
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

/** A command printing exactly `count` bytes (spaces) with `printf`, portable to dash, bash, busybox and just-bash. */
export function printBytesCommand(count: number, stream: "stdout" | "stderr" = "stdout"): string {
  return `printf '%*s' ${count} ''${stream === "stderr" ? " 1>&2" : ""}`;
}

/** How many times `commands.combined-output-order` runs its command: every run must keep the order. */
export const COMBINED_OUTPUT_RUNS = 5;

/** Lists process command lines when `ps` exists, or prints `no-ps`. */
const PROCESS_LIST_COMMAND = "if command -v ps >/dev/null 2>&1; then ps -eo args; else echo no-ps; fi";

async function processLines(sandbox: Sandbox): Promise<string[] | undefined> {
  const listing = await sandbox.commands.run(PROCESS_LIST_COMMAND);
  if (listing.stdout.trim() === "no-ps" || listing.exitCode !== 0) return undefined;
  return listing.stdout.split("\n").map((line) => line.trim());
}

/** Registers the shell command tests. */
export function registerCommandsTests(harness: ContractHarness): void {
  const { contractTest, capabilities } = harness;

  contractTest("commands.exit-codes", "a non-zero exit code is a result, not an error", async () => {
    await using sandbox = await harness.createSandbox();
    expect((await sandbox.commands.run("exit 0")).exitCode).toBe(0);
    const failed = await sandbox.commands.run("echo before; exit 3");
    expect(failed.exitCode).toBe(3);
    expect(failed.stdout).toBe("before\n");
  });

  contractTest("commands.stdout-stderr-separate", "stdout and stderr are kept apart", async () => {
    await using sandbox = await harness.createSandbox();
    const result = await sandbox.commands.run("echo to-out; echo to-err 1>&2; echo more-out");
    expect(result.stdout).toBe("to-out\nmore-out\n");
    expect(result.stderr).toBe("to-err\n");
    expect(new TextDecoder().decode(result.stderrBytes)).toBe("to-err\n");
  });

  contractTest("commands.streaming-order", "onStdout receives several delayed prints in order, and the result matches", async () => {
    await using sandbox = await harness.createSandbox();
    const chunks: string[] = [];
    const result = await sandbox.commands.run("for i in 1 2 3 4 5; do echo line-$i; sleep 0.1; done", { onStdout: (text) => chunks.push(text) });
    const expected = "line-1\nline-2\nline-3\nline-4\nline-5\n";
    expect(chunks.join("")).toBe(expected);
    expect(result.stdout).toBe(expected);
  });

  contractTest("commands.binary-bytes", "invalid UTF-8 is kept exactly in stdoutBytes and becomes U+FFFD in stdout", async () => {
    await using sandbox = await harness.createSandbox();
    const result = await sandbox.commands.run("printf '\\377\\376'");
    expect([...result.stdoutBytes]).toEqual([0xff, 0xfe]);
    expect(result.stdout).toContain("\uFFFD");
    expect(result.totalBytes.stdout).toBe(2);
  });

  contractTest("commands.split-multibyte-streaming", "a multi-byte character split across writes is decoded whole when streaming", async () => {
    await using sandbox = await harness.createSandbox();
    const chunks: string[] = [];
    const result = await sandbox.commands.run("printf '\\342\\202'; sleep 0.4; printf '\\254\\n'", { onStdout: (text) => chunks.push(text) });
    expect(chunks.join("")).toBe("€\n");
    expect(chunks.join("")).not.toContain("\uFFFD");
    expect([...result.stdoutBytes]).toEqual([0xe2, 0x82, 0xac, 0x0a]);
    expect(result.stdout).toBe("€\n");
  });

  contractTest("commands.cwd-default", "commands run in the workspace by default", async () => {
    await using sandbox = await harness.createSandbox();
    const result = await sandbox.commands.run("pwd");
    expect(result.stdout.trim()).toBe(sandbox.workspace);
  });

  contractTest("commands.cwd-relative", "a relative cwd is taken from the workspace", async () => {
    await using sandbox = await harness.createSandbox();
    await sandbox.files.mkdir("nested/folder");
    const result = await sandbox.commands.run("pwd", { cwd: "nested/folder" });
    expect(result.stdout.trim()).toBe(`${sandbox.workspace}/nested/folder`);
  });

  contractTest("commands.cwd-absolute", "an absolute cwd is used as given", async () => {
    await using sandbox = await harness.createSandbox();
    await sandbox.files.mkdir("absolute-target");
    const result = await sandbox.commands.run("pwd", { cwd: `${sandbox.workspace}/absolute-target` });
    expect(result.stdout.trim()).toBe(`${sandbox.workspace}/absolute-target`);
  });

  contractTest("commands.env", "sandbox env and per-command env reach the command; per-command wins", async () => {
    await using sandbox = await harness.createSandbox({ env: { SBX_CONTRACT_A: "from-sandbox", SBX_CONTRACT_C: "sandbox-c" } });
    const both = await sandbox.commands.run(`printf '%s|%s|%s' "$SBX_CONTRACT_A" "$SBX_CONTRACT_B" "$SBX_CONTRACT_C"`, {
      env: { SBX_CONTRACT_B: "from-command", SBX_CONTRACT_C: "command-c" },
    });
    expect(both.stdout).toBe("from-sandbox|from-command|command-c");
    const later = await sandbox.commands.run(`printf '%s|%s' "$SBX_CONTRACT_B" "$SBX_CONTRACT_C"`);
    expect(later.stdout).toBe("|sandbox-c");
  });

  contractTest("commands.no-stdin-is-empty", "without stdin, a command reading stdin sees end of file at once", async () => {
    await using sandbox = await harness.createSandbox();
    const result = await sandbox.commands.run("cat; echo after-cat");
    expect(result.exitCode).toBe(0);
    expect(result.stdout).toBe("after-cat\n");
  });

  if (capabilities.STDIN) {
    contractTest("commands.stdin", "stdin text and bytes reach the command, then end of file", async () => {
      await using sandbox = await harness.createSandbox();
      const text = await sandbox.commands.run("cat", { stdin: "hello stdin\nsecond line" });
      expect(text.stdout).toBe("hello stdin\nsecond line");
      const bytes = new Uint8Array([0, 1, 0x7f, 0x80, 0xfe, 0xff, 0x0a]);
      const binary = await sandbox.commands.run("cat", { stdin: bytes });
      expect([...binary.stdoutBytes]).toEqual([...bytes]);
    });
  } else {
    contractTest("commands.stdin-refused", "stdin raises SBX_CAPABILITY_NOT_SUPPORTED when STDIN is off", async () => {
      await using sandbox = await harness.createSandbox();
      await expectCapabilityRefused(harness, () => sandbox.commands.run("cat", { stdin: "x" }), "STDIN");
    });
  }

  contractTest("commands.timeout-kills-tree", "a timeout kills the command and every child it started (SBX_TIMEOUT, killed)", async () => {
    await using sandbox = await harness.createSandbox();
    const command = "(sleep 3; echo leaked > timeout-marker.txt) & (sleep 3; echo leaked > timeout-marker.txt) & wait";
    const error = await expectSbxError(() => sandbox.commands.run(command, { timeoutMs: 1500 }), "SBX_TIMEOUT");
    expect((error as { killed?: boolean }).killed, `TimeoutError.killed (the kill was verified): ${error.message}`).toBe(true);
    // Give the children time past their 3 s sleep: had any survived, the marker would now exist.
    await delay(4000);
    expect(
      await sandbox.files.exists("timeout-marker.txt"),
      "timeout-marker.txt exists: a child of the timed-out command survived and wrote it",
    ).toBe(false);
    const processes = await processLines(sandbox);
    if (processes) expect(processes.filter((line) => /^sleep 3$/.test(line))).toEqual([]);
    expect((await sandbox.commands.run("echo still-usable")).stdout).toBe("still-usable\n");
  });

  contractTest(
    "commands.combined-output-order",
    `combinedOutput: stdout and stderr come back as one stream in the order the process wrote them (${COMBINED_OUTPUT_RUNS} of ${COMBINED_OUTPUT_RUNS} runs), streamed to onOutput`,
    async () => {
      await using sandbox = await harness.createSandbox();
      for (let run = 1; run <= COMBINED_OUTPUT_RUNS; run++) {
        const streamed: string[] = [];
        const result = await sandbox.commands.run("echo o1; echo e1 >&2; echo o2", { combinedOutput: true, onOutput: (text) => streamed.push(text) });
        expect(result.output, `run ${run}: the merged output`).toBe("o1\ne1\no2\n");
        expect(streamed.join(""), `run ${run}: what onOutput received`).toBe("o1\ne1\no2\n");
        // The merged stream came down the stdout pipe; nothing reached stderr after the merge.
        expect(result.stdout).toBe("o1\ne1\no2\n");
        expect(result.stderr).toBe("");
        expect(result.exitCode).toBe(0);
      }
      const failing = await sandbox.commands.run("echo out; echo err >&2; exit 4", { combinedOutput: true });
      expect(failing.exitCode, "a non-zero exit with combinedOutput is a result").toBe(4);
      expect(failing.output).toBe("out\nerr\n");
      const separate = await sandbox.commands.run("echo o1; echo e1 >&2");
      expect(separate.output, "without combinedOutput the result has no output field").toBeUndefined();
      await expectSbxError(() => sandbox.commands.run("echo x", { onOutput: () => {} }), "SBX_INVALID_ARGUMENT");
    },
  );

  contractTest(
    "commands.combined-output-cap",
    "combinedOutput: outputLimitBytes caps the merged stream like stdout (kept bytes, truncated, totalBytes), and a timeout's partial output is the merged stream",
    async () => {
      await using sandbox = await harness.createSandbox();
      const result = await sandbox.commands.run(`${printBytesCommand(600)}; ${printBytesCommand(600, "stderr")}`, {
        combinedOutput: true,
        outputLimitBytes: 1000,
      });
      expect(result.output?.length, "bytes of merged output kept").toBe(1000);
      expect(result.stdoutBytes.byteLength).toBe(1000);
      expect(result.truncated.stdout).toBe(true);
      expect(result.totalBytes.stdout).toBe(1200);
      expect(result.truncated.stderr).toBe(false);
      const error = await expectSbxError(
        () => sandbox.commands.run("echo before-out; echo before-err >&2; sleep 30", { combinedOutput: true, timeoutMs: 2000 }),
        "SBX_TIMEOUT",
      );
      expect((error as { partialStdout?: string }).partialStdout, "the timeout's partial output").toBe("before-out\nbefore-err\n");
    },
  );

  contractTest(
    "commands.default-timeout",
    "commands.defaultTimeoutMs at create: a command given no timeoutMs is killed with its children at the default (SBX_TIMEOUT, killed); its own timeoutMs wins",
    async () => {
      await using sandbox = await harness.createSandbox({ commands: { defaultTimeoutMs: 1500 } });
      const command = "(sleep 3; echo leaked > default-timeout-marker.txt) & sleep 3; wait";
      const error = await expectSbxError(() => sandbox.commands.run(command), "SBX_TIMEOUT");
      expect((error as { timeoutMs?: number }).timeoutMs, "the timeout reported is the default").toBe(1500);
      expect((error as { killed?: boolean }).killed, `TimeoutError.killed (the kill was verified): ${error.message}`).toBe(true);
      await delay(4000);
      expect(
        await sandbox.files.exists("default-timeout-marker.txt"),
        "default-timeout-marker.txt exists: a child of the timed-out command survived and wrote it",
      ).toBe(false);
      const own = await sandbox.commands.run("sleep 2.5; echo finished", { timeoutMs: 30_000 });
      expect(own.stdout, "a command's own timeoutMs replaces the default").toBe("finished\n");
    },
  );

  contractTest("commands.abort", "aborting through an AbortSignal kills the command and raises SBX_ABORTED", async () => {
    await using sandbox = await harness.createSandbox();
    const controller = new AbortController();
    const running = sandbox.commands.run("echo started; sleep 3; echo leaked > abort-marker.txt", {
      signal: controller.signal,
      onStdout: (text) => {
        if (text.includes("started")) controller.abort();
      },
    });
    await expectSbxError(running, "SBX_ABORTED");
    const already = new AbortController();
    already.abort();
    await expectSbxError(() => sandbox.commands.run("echo never", { signal: already.signal }), "SBX_ABORTED");
    await delay(4000);
    expect(await sandbox.files.exists("abort-marker.txt"), "abort-marker.txt exists: a child of the aborted command survived and wrote it").toBe(
      false,
    );
  });

  contractTest(
    "commands.output-cap",
    "outputLimitBytes keeps at most the cap per stream: cap-1, cap, cap+1 give truncated false, false, true",
    async () => {
      await using sandbox = await harness.createSandbox();
      const cap = 1000;
      for (const stream of ["stdout", "stderr"] as const) {
        for (const produced of [cap - 1, cap, cap + 1, cap * 5]) {
          const result = await sandbox.commands.run(printBytesCommand(produced, stream), { outputLimitBytes: cap });
          const bytes = stream === "stdout" ? result.stdoutBytes : result.stderrBytes;
          expect(bytes.byteLength).toBe(Math.min(produced, cap));
          expect(result.truncated[stream]).toBe(produced > cap);
          expect(result.totalBytes[stream]).toBe(produced);
          expect(
            result.truncated[stream === "stdout" ? "stderr" : "stdout"],
            `truncated flag of the stream that was not flooded (${stream === "stdout" ? "stderr" : "stdout"})`,
          ).toBe(false);
        }
      }
    },
  );

  contractTest("commands.background-child-holds-stdout", "a finished command returns even while a background child still holds stdout", async () => {
    await using sandbox = await harness.createSandbox();
    const result = await sandbox.commands.run("(sleep 20; echo late > late-marker.txt) & echo done");
    expect(result.exitCode).toBe(0);
    expect(result.stdout).toBe("done\n");
    // The command returned before its child could finish: proof that the result was not gated on end of stream.
    expect(
      await sandbox.files.exists("late-marker.txt"),
      "late-marker.txt exists: the result waited for the background child to end instead of returning when the shell exited",
    ).toBe(false);
  });

  contractTest("commands.invalid-arguments", "invalid command arguments raise SBX_INVALID_ARGUMENT", async () => {
    await using sandbox = await harness.createSandbox();
    await expectSbxError(() => sandbox.commands.run(""), "SBX_INVALID_ARGUMENT");
    await expectSbxError(() => sandbox.commands.run(42 as unknown as string), "SBX_INVALID_ARGUMENT");
    await expectSbxError(() => sandbox.commands.run("echo x", { timeoutMs: 0 }), "SBX_INVALID_ARGUMENT");
    await expectSbxError(() => sandbox.commands.run("echo x", { outputLimitBytes: -1 }), "SBX_INVALID_ARGUMENT");
    await expectSbxError(() => sandbox.commands.run("echo x", { env: { "not valid": "x" } }), "SBX_INVALID_ARGUMENT");
    await expectSbxError(() => sandbox.commands.run("echo x", { unknownOption: true } as never), "SBX_INVALID_ARGUMENT");
    await expectSbxError(
      () => sandbox.commands.run("echo x", { stdin: true }),
      capabilities.STDIN ? "SBX_INVALID_ARGUMENT" : "SBX_CAPABILITY_NOT_SUPPORTED",
    );
  });

  contractTest(
    "commands.interrupt-default",
    "a command starts with SIGINT at its default, measured inside (SigIgn of its shell) and by effect (kill -INT of its own shell ends it with 130), also once code ran (on Docker the agent then carries commands)",
    async () => {
      await using sandbox = await harness.createSandbox();
      const measure = async (when: string) => {
        const ignored = await sandbox.commands.run("sed -n 's/^SigIgn:[[:space:]]*//p' /proc/$$/status");
        expect(ignored.exitCode, `${when}: reading SigIgn`).toBe(0);
        expect(BigInt(`0x${ignored.stdout.trim()}`) & 2n, `${when}: SIGINT (bit 2) in the shell's SigIgn ${ignored.stdout.trim()}`).toBe(0n);
        const interrupted = await sandbox.commands.run("kill -INT $$; echo survived");
        expect({ exitCode: interrupted.exitCode, stdout: interrupted.stdout }, `${when}: kill -INT of the command's shell`).toEqual({
          exitCode: 130,
          stdout: "",
        });
      };
      await measure("first command");
      // A backend that runs commands through the sbx agent once it is up (Docker's default) starts it for code.
      if (capabilities.STATEFUL_CODE) {
        expect((await sandbox.runCode("print(1)")).stdout).toBe("1\n");
        await measure("after code ran");
      }
    },
  );
}

/** The shell commands group on its own. */
export function describeCommandsContract(name: string, factory: SandboxProviderFactoryForContract, options?: SandboxContractOptions): void {
  describeGroup("commands", name, factory, options, registerCommandsTests);
}
