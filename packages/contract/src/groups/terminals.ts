import { expect } from "vitest";
import type { Terminal, TerminalOptions } from "@sbx/core";
import {
  delay,
  describeGroup,
  expectCapabilityRefused,
  expectSbxError,
  type ContractHarness,
  type SandboxContractOptions,
  type SandboxProviderFactoryForContract,
} from "../harness.js";

/** How long a test waits for output it expects before failing (generous: the machine may be loaded). */
const OUTPUT_WAIT_MS = 30_000;

/** A terminal's output as text so far, and a way to wait for a pattern in it. */
class TerminalScreen {
  text = "";
  private waiters: Array<() => void> = [];

  readonly onData = (data: Uint8Array): void => {
    this.text += Buffer.from(data).toString("utf8");
    for (const waiter of this.waiters.splice(0)) waiter();
  };

  /** Resolves once the output (from `from` on) matches `pattern`; fails after `OUTPUT_WAIT_MS` with what was seen. */
  async waitFor(pattern: RegExp, from = 0): Promise<RegExpMatchArray> {
    const deadline = Date.now() + OUTPUT_WAIT_MS;
    for (;;) {
      const match = this.text.slice(from).match(pattern);
      if (match) return match;
      if (Date.now() > deadline)
        throw new Error(`no ${String(pattern)} in the terminal's output within ${OUTPUT_WAIT_MS} ms: ${JSON.stringify(this.text.slice(-500))}`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, 500);
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }
}

/** Registers the terminal tests (`PTY`, ADR 0049), or their refusal when it is off. */
export function registerTerminalTests(harness: ContractHarness): void {
  const { contractTest, capabilities } = harness;

  if (!capabilities.PTY) {
    contractTest("terminals.refused", "terminals.create() raises SBX_CAPABILITY_NOT_SUPPORTED when PTY is off", async () => {
      await using sandbox = await harness.createSandbox();
      await expectCapabilityRefused(harness, () => sandbox.terminals.create({ onData: () => {} }), "PTY");
    });
    return;
  }

  const open = async (sandbox: Awaited<ReturnType<ContractHarness["createSandbox"]>>, options: Omit<TerminalOptions, "onData"> = {}) => {
    const screen = new TerminalScreen();
    const terminal: Terminal = await sandbox.terminals.create({ ...options, onData: screen.onData });
    return { screen, terminal };
  };

  contractTest(
    "terminals.interactive-shell",
    "the default shell runs on a terminal: typed input is echoed and run, Ctrl-C interrupts the foreground program, and the exit code it exits with is the one wait() reports",
    async () => {
      await using sandbox = await harness.createSandbox();
      const { screen, terminal } = await open(sandbox);
      expect(terminal.pid.length).toBeGreaterThan(0);
      await terminal.write("echo sum-$((40 + 2))\n");
      await screen.waitFor(/sum-42/);
      await terminal.write("test -t 0 && test -t 1 && echo is-a-tty\n");
      await screen.waitFor(/is-a-tty\r?\n/);
      // Ctrl-C is the terminal's interrupt: it stops the foreground program, and the shell goes on.
      // The marker is printed by the shell (the typed line shows `sleep''ing`), right before the sleep starts; the
      // pause lets the sleep become the terminal's foreground job (a Ctrl-C before that reaches only the shell).
      await terminal.write("echo sleep''ing; sleep 300\n");
      await screen.waitFor(/sleeping\r?\n/);
      await delay(1_000);
      const beforeInterrupt = screen.text.length;
      await terminal.write("\u0003");
      await terminal.write("echo after-$((1 + 1))\n");
      await screen.waitFor(/after-2/, beforeInterrupt);
      await terminal.write("exit 7\n");
      const exit = await terminal.wait();
      expect(exit.exitCode).toBe(7);
    },
  );

  contractTest(
    "terminals.size-and-resize",
    "the terminal has the size asked for, measured inside with stty; resize() changes it for the running program (a backend declaring terminalFixedSize: another size and resize() are refused, its size measured inside)",
    async () => {
      await using sandbox = await harness.createSandbox();
      const fixed = harness.options.terminalFixedSize;
      if (fixed) {
        // A declared difference (the backend's terminals have one size): another size and resize() are refused, typed.
        await expectCapabilityRefused(
          harness,
          () => sandbox.terminals.create({ cols: fixed.cols + 21, rows: fixed.rows + 9, onData: () => {} }),
          "PTY",
        );
        const { screen, terminal } = await open(sandbox, { cols: fixed.cols, rows: fixed.rows, command: "stty size; read line" });
        await screen.waitFor(new RegExp(`${fixed.rows} ${fixed.cols}`));
        await expectCapabilityRefused(harness, () => terminal.resize({ cols: 120, rows: 40 }), "PTY");
        await terminal.write("\n");
        expect((await terminal.wait()).exitCode).toBe(0);
        return;
      }
      const { screen, terminal } = await open(sandbox, { cols: 101, rows: 33, command: "stty size; read line; stty size; read line" });
      await screen.waitFor(/33 101/);
      const mark = screen.text.length;
      await terminal.resize({ cols: 120, rows: 40 });
      await terminal.write("\n");
      await screen.waitFor(/40 120/, mark);
      await terminal.write("\n");
      expect((await terminal.wait()).exitCode).toBe(0);
      await expectSbxError(() => terminal.resize({ cols: 0, rows: 10 }), "SBX_INVALID_ARGUMENT");
    },
  );

  contractTest(
    "terminals.kill-verified",
    "kill() ends the terminal and every process it started (counted inside afterwards); wait() reports 137, never 0",
    async () => {
      await using sandbox = await harness.createSandbox();
      const { screen, terminal } = await open(sandbox, { command: "sleep 1071 & sleep 1072 & echo started; wait" });
      await screen.waitFor(/started/);
      await terminal.kill();
      const exit = await terminal.wait();
      expect(exit.exitCode).toBe(137);
      const left = await sandbox.commands.run(
        "for f in /proc/[0-9]*/cmdline; do tr '\\0' ' ' < $f 2>/dev/null; echo; done | grep -c 'sleep 107[12]' || true",
      );
      expect(left.stdout.trim(), "processes the terminal started").toBe("0");
    },
  );

  contractTest(
    "terminals.timeout-and-callback",
    "a terminal past timeoutMs is killed and wait() rejects with TimeoutError (killed: true); an onData that throws kills it and wait() rejects with CallbackError",
    async () => {
      await using sandbox = await harness.createSandbox();
      const { terminal } = await open(sandbox, { command: "sleep 300", timeoutMs: 1_000 });
      const timedOut = await expectSbxError(terminal.wait(), "SBX_TIMEOUT");
      expect((timedOut as unknown as { killed: boolean }).killed).toBe(true);
      const throwing = await sandbox.terminals.create({
        command: "echo boom; sleep 300",
        onData: () => {
          throw new Error("the caller's callback failed");
        },
      });
      await expectSbxError(throwing.wait(), "SBX_CALLBACK_FAILED");
    },
  );

  contractTest(
    "terminals.end-with-sandbox",
    "a terminal left open does not outlive the sandbox: killing the sandbox ends it, and wait() never reports a made-up exit 0",
    async () => {
      const sandbox = await harness.createSandbox();
      const { screen, terminal } = await open(sandbox, { command: "echo ready; sleep 300" });
      await screen.waitFor(/ready/);
      const waited = terminal.wait().then(
        (exit) => exit.exitCode,
        (error: unknown) => error,
      );
      await sandbox.kill();
      const outcome = await waited;
      expect(outcome, "a terminal killed with its sandbox has no exit code 0").not.toBe(0);
    },
  );
}

/** The terminals group on its own. */
export function describeTerminalsContract(name: string, factory: SandboxProviderFactoryForContract, options?: SandboxContractOptions): void {
  describeGroup("terminals", name, factory, options, registerTerminalTests);
}
