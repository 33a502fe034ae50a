import type { Sandbox } from "@sbx/core";
import { expect, type TestContext } from "vitest";
import {
  delay,
  describeGroup,
  expectSbxError,
  type ContractHarness,
  type SandboxContractOptions,
  type SandboxProviderFactoryForContract,
} from "../harness.js";

/** The sandbox lifetime (`timeoutMs`) `lost-sandbox.lifetime-ends` asks for. */
export const LIFETIME_END_TEST_LIFETIME_MS = 5_000;

/**
 * How long `lost-sandbox.mid-command` waits, after removing the sandbox, for the running command to fail. Much shorter
 * than the command (`sleep 600`), so the command's own end cannot pass it; long enough for a loaded machine.
 */
export const MID_COMMAND_LOSS_BOUND_MS = 25_000;

/**
 * How long `lost-sandbox.ended-without-a-call` waits for `ended` after the removal: core probes an open sandbox every
 * 10 s (each probe bounded by 5 s), so a loss is found within 15 s; the rest is room for a loaded machine.
 */
export const ENDED_WITHOUT_CALL_BOUND_MS = 35_000;

function removerOf(harness: ContractHarness, context: TestContext): (sandbox: Sandbox) => Promise<void> {
  const remove = harness.options.removeOutOfBand;
  if (!remove) context.skip("the adapter's contract options give no removeOutOfBand hook, so the suite cannot remove a sandbox behind sbx's back");
  return remove!;
}

/**
 * Registers the lost-sandbox tests: a sandbox that disappears (removed out of band, or its lifetime ended) gives one
 * typed error, `SandboxNotFoundError`, on every call from then on, and is reported closed. A command running when the
 * lifetime ends gets the same error (ADR 0023): the sandbox is gone, so there is no exit code to report.
 */
export function registerLostSandboxTests(harness: ContractHarness): void {
  const { contractTest } = harness;

  contractTest(
    "lost-sandbox.every-call",
    "after the sandbox is removed out of band, every call raises SandboxNotFoundError and the sandbox is closed",
    async (context) => {
      const remove = removerOf(harness, context);
      const sandbox = await harness.createSandbox();
      await sandbox.files.write("before.txt", "there");
      await remove(sandbox);
      await expectSbxError(() => sandbox.commands.run("echo hello"), "SBX_SANDBOX_NOT_FOUND");
      expect(sandbox.closed, "sandbox.closed after a call met the removed sandbox").toBe(true);
      await expectSbxError(() => sandbox.files.read("before.txt"), "SBX_SANDBOX_NOT_FOUND");
      await expectSbxError(() => sandbox.files.write("after.txt", "x"), "SBX_SANDBOX_NOT_FOUND");
      await expectSbxError(() => sandbox.runCode("print(1)"), "SBX_SANDBOX_NOT_FOUND");
      await expectSbxError(() => sandbox.commands.run("echo again"), "SBX_SANDBOX_NOT_FOUND");
      expect(sandbox.audit().closedAt).not.toBeNull();
      // kill() of a sandbox that is already gone resolves.
      await sandbox.kill();
    },
  );

  contractTest(
    "lost-sandbox.first-call-is-a-file-operation",
    "a file operation is the first call after the removal: SandboxNotFoundError, not FileNotFoundError",
    async (context) => {
      const remove = removerOf(harness, context);
      const sandbox = await harness.createSandbox();
      await sandbox.files.write("before.txt", "there");
      await remove(sandbox);
      await expectSbxError(() => sandbox.files.read("before.txt"), "SBX_SANDBOX_NOT_FOUND");
      expect(sandbox.closed, "sandbox.closed after a file call met the removed sandbox").toBe(true);
      await sandbox.kill();
    },
  );

  contractTest(
    "lost-sandbox.mid-command",
    `a command running when the sandbox is removed fails with SandboxNotFoundError within ${MID_COMMAND_LOSS_BOUND_MS / 1000} s (a watchdog, not the command's own end)`,
    async (context) => {
      const remove = removerOf(harness, context);
      const sandbox = await harness.createSandbox();
      // The command would run for 10 minutes and its own timeout is longer still: only a driver that notices the loss
      // (a watchdog, an exec stream that ends with the container) settles it inside the bound.
      const running = sandbox.commands.run("echo started; sleep 600", { timeoutMs: 900_000 });
      running.catch(() => {});
      await delay(1_500);
      await remove(sandbox);
      const settled = await Promise.race([
        running.then(
          () => "a result",
          () => "an error",
        ),
        delay(MID_COMMAND_LOSS_BOUND_MS).then(() => "still running"),
      ]);
      expect(
        settled,
        `the command ${settled === "still running" ? `was still running ${MID_COMMAND_LOSS_BOUND_MS / 1000} s after its sandbox was removed: no watchdog noticed the loss` : `settled with ${settled}`}`,
      ).toBe("an error");
      await expectSbxError(running, "SBX_SANDBOX_NOT_FOUND");
      expect(sandbox.closed, "sandbox.closed after the running command met the removal").toBe(true);
      await expectSbxError(() => sandbox.commands.run("echo after"), "SBX_SANDBOX_NOT_FOUND");
      await sandbox.kill();
    },
  );

  contractTest(
    "lost-sandbox.ended-without-a-call",
    `after the sandbox is removed out of band, closed becomes true and ended resolves with reason lost within ${ENDED_WITHOUT_CALL_BOUND_MS / 1000} s, with no call made (core's periodic probe)`,
    async (context) => {
      const remove = removerOf(harness, context);
      const sandbox = await harness.createSandbox();
      await remove(sandbox);
      const end = await Promise.race([sandbox.ended, delay(ENDED_WITHOUT_CALL_BOUND_MS).then(() => undefined)]);
      expect(end?.reason, "sandbox.ended after the removal (undefined: it never resolved)").toBe("lost");
      expect(sandbox.closed, "sandbox.closed after the removal, before any call").toBe(true);
      await expectSbxError(() => sandbox.commands.run("echo after"), "SBX_SANDBOX_NOT_FOUND");
      await sandbox.kill();
      expect((await sandbox.ended).reason, "kill() after the loss does not change the reason").toBe("lost");
    },
  );

  contractTest(
    "lost-sandbox.lifetime-ends",
    "a command running when the sandbox's lifetime ends fails with SandboxNotFoundError (not a result, not a timeout); the sandbox is closed",
    async () => {
      // The shortest lifetime that still lets the command start on a loaded machine; a command that did not start in
      // time meets the same rule (the sandbox is gone), so the outcome does not depend on timing.
      const sandbox = await harness.createSandbox({ timeoutMs: LIFETIME_END_TEST_LIFETIME_MS });
      const running = sandbox.commands.run("echo started; sleep 120", { timeoutMs: 110_000 });
      running.catch(() => {});
      await expectSbxError(running, "SBX_SANDBOX_NOT_FOUND");
      expect(sandbox.closed, "sandbox.closed after its lifetime ended").toBe(true);
      await expectSbxError(() => sandbox.commands.run("echo after"), "SBX_SANDBOX_NOT_FOUND");
      await expectSbxError(() => sandbox.files.write("after.txt", "x"), "SBX_SANDBOX_NOT_FOUND");
      await sandbox.kill();
    },
  );
}

/** The lost-sandbox group on its own. */
export function describeLostSandboxContract(name: string, factory: SandboxProviderFactoryForContract, options?: SandboxContractOptions): void {
  describeGroup("lost sandbox", name, factory, options, registerLostSandboxTests);
}
