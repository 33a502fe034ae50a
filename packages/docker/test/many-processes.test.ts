import { readdirSync } from "node:fs";
import { isSbxError, type CommandHandle } from "@sbx/core";
import { expect, it } from "vitest";
import { createTestSandbox, describeWithDocker } from "./docker-test-environment.js";

// adr/0030: many background commands must not leak host descriptors or leave handles unsettled, and the number of
// live commands per sandbox is bounded (a typed error past the bound, recorded in the audit record).

const openDescriptors = () => readdirSync("/proc/self/fd").length;
const delay = (milliseconds: number) => new Promise((resolve) => setTimeout(resolve, milliseconds));

/** Waits until the host's open descriptors are back within `margin` of `baseline` (or `timeoutMs` passed); returns the last count. */
async function descriptorsSettle(baseline: number, margin: number, timeoutMs: number): Promise<number> {
  let count = openDescriptors();
  for (let waited = 0; count > baseline + margin && waited < timeoutMs; waited += 200) {
    await delay(200);
    count = openDescriptors();
  }
  return count;
}

const COMMANDS = 64;

describeWithDocker("many background commands (adr/0030)", () => {
  it(`${COMMANDS} background commands on the exec path: every handle settles with kill(), and host descriptors return to the baseline`, async () => {
    const baseline = openDescriptors();
    const sandbox = await createTestSandbox({ maxLiveProcesses: COMMANDS + 10 }, { agentCommands: "off" });
    const handles: CommandHandle[] = [];
    for (let batch = 0; batch < COMMANDS; batch += 32) {
      handles.push(...(await Promise.all(Array.from({ length: 32 }, () => sandbox.commands.start("sleep 600")))));
    }
    expect(handles.length).toBe(COMMANDS);
    expect(sandbox.audit().policies.processes).toEqual({
      requested: { maxLiveProcesses: COMMANDS + 10 },
      applied: { maxLiveProcesses: COMMANDS + 10 },
      enforcement: expect.stringContaining("TooManyProcessesError"),
    });
    const during = openDescriptors();
    await sandbox.kill();
    const outcomes = await Promise.race([Promise.allSettled(handles.map((handle) => handle.wait())), delay(30_000).then(() => "unsettled" as const)]);
    expect(outcomes, "every handle settles once its sandbox is killed").not.toBe("unsettled");
    const after = await descriptorsSettle(baseline, 10, 20_000);
    expect(
      { during: during > baseline, after: after - baseline <= 10 },
      `descriptors: baseline ${baseline}, with ${COMMANDS} commands ${during}, after kill() ${after}`,
    ).toEqual({ during: true, after: true });
  }, 150_000);

  it("a command past maxLiveProcesses is refused with TooManyProcessesError (not retryable), and a finished command frees its slot", async () => {
    await using sandbox = await createTestSandbox({ maxLiveProcesses: 3 }, { agentCommands: "off" });
    const first = await sandbox.commands.start("sleep 600");
    await sandbox.commands.start("sleep 600");
    await sandbox.commands.start("sleep 600");
    const refused = await sandbox.commands.start("echo refused > refused.txt").then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(isSbxError(refused, "SBX_TOO_MANY_PROCESSES")).toBe(true);
    expect(refused).toMatchObject({ name: "TooManyProcessesError", retryable: false, limit: 3 });
    expect((refused as Error).message).toMatch(/3 live/);
    expect((refused as Error).message).toContain("maxLiveProcesses");
    const refusedRun = await sandbox.commands.run("echo refused").then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(isSbxError(refusedRun, "SBX_TOO_MANY_PROCESSES")).toBe(true);
    await first.kill();
    await first.wait().catch(() => undefined);
    // The refused start left nothing behind; the freed slot takes a new command.
    expect((await sandbox.commands.run("ls refused.txt 2>&1 || true")).stdout).toContain("No such file");
    expect(sandbox.audit().policies.processes?.applied).toEqual({ maxLiveProcesses: 3 });
  });
});
