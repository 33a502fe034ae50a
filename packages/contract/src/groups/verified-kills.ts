import { randomUUID } from "node:crypto";
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

/**
 * A process that escapes the command's kill as an attacker would: `setsid` (a new session and process group) and
 * `env -i` (an empty environment, so no marker variable is left to find it by), in the background. It writes a
 * heartbeat counter to `heartbeatPath` every 0.2 s for as long as it lives.
 */
function escapingCommand(heartbeatPath: string): string {
  return `setsid env -i /bin/sh -c 'i=0; while :; do i=$((i+1)); echo $i > ${heartbeatPath}; sleep 0.2; done' >/dev/null 2>&1 < /dev/null & sleep 60`;
}

/** Whether the heartbeat still moves: read it, wait well past two beats, read it again (from fresh commands). */
async function heartbeatMoves(sandbox: Sandbox, heartbeatPath: string): Promise<boolean> {
  const read = async () => (await sandbox.commands.run(`cat ${heartbeatPath} 2>/dev/null || echo none`)).stdout.trim();
  const first = await read();
  await delay(1_500);
  const second = await read();
  return first !== second;
}

async function requireEscapeTools(sandbox: Sandbox, context: TestContext): Promise<void> {
  const probe = await sandbox.commands.run(
    "command -v setsid >/dev/null 2>&1 && command -v env >/dev/null 2>&1 && [ -x /bin/sh ] && echo yes || echo no",
  );
  if (probe.stdout.trim() !== "yes") {
    context.skip(
      "the backend has no setsid/env/sh processes (an in-process shell): no process can leave the command's session, so the escape cannot be attempted here",
    );
  }
}

/** Registers the verified-kill tests: `killed: true` only when nothing the command started survives. */
export function registerVerifiedKillsTests(harness: ContractHarness): void {
  const { contractTest, capabilities } = harness;

  contractTest(
    "verified-kills.timeout-setsid-env-escape",
    "after a timeout, a setsid + env -i escapee is gone, and killed: true is reported only because it is",
    async (context) => {
      await using sandbox = await harness.createSandbox();
      await requireEscapeTools(sandbox, context);
      const heartbeat = `/tmp/sbx-heartbeat-${randomUUID()}`;
      const error = (await expectSbxError(() => sandbox.commands.run(escapingCommand(heartbeat), { timeoutMs: 2_000 }), "SBX_TIMEOUT")) as {
        killed?: boolean;
        message: string;
      };
      const survived = await heartbeatMoves(sandbox, heartbeat);
      // Honesty first: killed: true is a claim that nothing survived.
      if (error.killed === true)
        expect(survived, "the escaped process still writes its heartbeat although the timeout reported killed: true").toBe(false);
      else expect(error.message).toMatch(/could not verify/);
      // And the kill itself must reach the escapee.
      expect(survived, "the escaped process still writes its heartbeat after the timeout").toBe(false);
      expect(error.killed, `TimeoutError.killed (the kill was verified): ${error.message}`).toBe(true);
    },
  );

  contractTest("verified-kills.abort-setsid-env-escape", "after an abort, a setsid + env -i escapee is gone", async (context) => {
    await using sandbox = await harness.createSandbox();
    await requireEscapeTools(sandbox, context);
    const heartbeat = `/tmp/sbx-heartbeat-${randomUUID()}`;
    const controller = new AbortController();
    const running = sandbox.commands.run(escapingCommand(heartbeat), { signal: controller.signal });
    // Wait for the escapee's first beat before aborting, so the abort has something to kill.
    for (let attempt = 0; attempt < 50; attempt++) {
      if ((await sandbox.commands.run(`cat ${heartbeat} 2>/dev/null`)).stdout.trim() !== "") break;
      await delay(200);
    }
    controller.abort();
    await expectSbxError(running, "SBX_ABORTED");
    expect(await heartbeatMoves(sandbox, heartbeat), "the escaped process still writes its heartbeat after the abort").toBe(false);
  });

  if (capabilities.BACKGROUND_COMMANDS) {
    contractTest("verified-kills.handle-kill-escape", "handle.kill() resolves only once a setsid + env -i escapee is gone", async (context) => {
      await using sandbox = await harness.createSandbox();
      await requireEscapeTools(sandbox, context);
      const heartbeat = `/tmp/sbx-heartbeat-${randomUUID()}`;
      const handle = await sandbox.commands.start(escapingCommand(heartbeat));
      for (let attempt = 0; attempt < 50; attempt++) {
        if ((await sandbox.commands.run(`cat ${heartbeat} 2>/dev/null`)).stdout.trim() !== "") break;
        await delay(200);
      }
      await handle.kill();
      const result = await handle.wait();
      expect(result.exitCode).not.toBe(0);
      expect(await heartbeatMoves(sandbox, heartbeat), "the escaped process still writes its heartbeat after the handle's kill()").toBe(false);
    });
  }
}

/** The verified-kills group on its own. */
export function describeVerifiedKillsContract(name: string, factory: SandboxProviderFactoryForContract, options?: SandboxContractOptions): void {
  describeGroup("verified kills", name, factory, options, registerVerifiedKillsTests);
}
