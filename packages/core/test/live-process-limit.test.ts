import { describe, expect, it } from "vitest";
import { createSandbox, isSbxError } from "../src/index.ts";
import { caught } from "./support/caught.ts";
import { createMemoryProvider } from "./support/memory-driver.ts";

// adr/0030: core bounds the commands running at once in one sandbox, the same on every backend.

describe("maxLiveProcesses", () => {
  it("refuses a command past the bound before the backend is asked, typed and not retryable, and a finished command frees its slot", async () => {
    const provider = createMemoryProvider();
    await using sandbox = await createSandbox(provider, { maxLiveProcesses: 2 });
    const first = await sandbox.commands.start("hang");
    await sandbox.commands.start("hang");
    const spawnsBefore = provider.drivers[0]!.processes.length;
    const refused = await caught(() => sandbox.commands.start("hang"));
    expect(isSbxError(refused, "SBX_TOO_MANY_PROCESSES")).toBe(true);
    expect(refused).toMatchObject({ name: "TooManyProcessesError", retryable: false, limit: 2 });
    expect((refused as Error).message).toContain("2 live commands");
    expect(isSbxError(await caught(() => sandbox.commands.run("echo hi")), "SBX_TOO_MANY_PROCESSES")).toBe(true);
    // Nothing reached the backend.
    expect(provider.drivers[0]!.processes.length).toBe(spawnsBefore);
    await first.kill();
    await first.wait().catch(() => undefined);
    expect((await sandbox.commands.run("echo hi")).exitCode).toBe(0);
  });

  it("commands started at once count before their spawn answers", async () => {
    await using sandbox = await createSandbox(createMemoryProvider(), { maxLiveProcesses: 3 });
    const outcomes = await Promise.allSettled(Array.from({ length: 5 }, () => sandbox.commands.start("hang")));
    expect(outcomes.filter((outcome) => outcome.status === "fulfilled").length).toBe(3);
    expect(outcomes.filter((outcome) => outcome.status === "rejected" && isSbxError(outcome.reason, "SBX_TOO_MANY_PROCESSES")).length).toBe(2);
  });

  it("is in the audit record, with the default 256 when not given, and refuses invalid values", async () => {
    await using given = await createSandbox(createMemoryProvider(), { maxLiveProcesses: 7 });
    expect(given.audit().policies.processes).toEqual({
      requested: { maxLiveProcesses: 7 },
      applied: { maxLiveProcesses: 7 },
      enforcement: expect.stringContaining("TooManyProcessesError"),
    });
    await using defaulted = await createSandbox(createMemoryProvider());
    expect(defaulted.audit().policies.processes?.applied).toEqual({ maxLiveProcesses: 256 });
    expect(isSbxError(await caught(() => createSandbox(createMemoryProvider(), { maxLiveProcesses: 0 })), "SBX_INVALID_ARGUMENT")).toBe(true);
  });
});
