/**
 * Core's pause seam (ADR 0055): one gate in the call channel refuses every call path while paused with
 * `SandboxPausedError` (not retryable), a pause the backend could not verify leaves the sandbox running, a failed
 * resume leaves it paused, pause and resume are idempotent, kill works while paused, and the audit record keeps both.
 */
import { describe, expect, it } from "vitest";
import { createSandbox, defineCapabilities, type Sandbox } from "../src/index.ts";
import { caught } from "./support/caught.ts";
import type { SandboxDriverV1 } from "../src/adapter.ts";
import { createMemoryProvider, type MemoryDriver } from "./support/memory-driver.ts";

/** A memory provider declaring PAUSE whose drivers answer pause and resume as `behaviour` says. */
function pausableProvider(behaviour: { pauseFails?: boolean; resumeFails?: boolean } = {}) {
  const provider = createMemoryProvider({
    backend: "memory-pause",
    capabilities: defineCapabilities({ BACKGROUND_COMMANDS: true, STDIN: true, PAUSE: true, languages: ["python"] }),
  });
  const calls: string[] = [];
  const create = provider.create.bind(provider);
  provider.create = async (request) => {
    const driver = (await create(request)) as MemoryDriver & Pick<SandboxDriverV1, "pause" | "resume">;
    driver.pause = async () => {
      calls.push("pause");
      if (behaviour.pauseFails) throw new Error("the processes could not be verified stopped");
      return { enforcement: "memory: nothing runs" };
    };
    driver.resume = async () => {
      calls.push("resume");
      if (behaviour.resumeFails) throw new Error("the continue helper failed");
    };
    return driver;
  };
  return { provider, calls };
}

/** Every call path a caller has, each to be refused while paused. */
function everyCall(sandbox: Sandbox): Array<[string, () => Promise<unknown>]> {
  return [
    ["commands.run", () => sandbox.commands.run("echo hi")],
    ["commands.start", () => sandbox.commands.start("hang")],
    ["runCode", () => sandbox.runCode("print(1)")],
    ["files.read", () => sandbox.files.read("a.txt")],
    ["files.write", () => sandbox.files.write("a.txt", "x")],
    ["files.list", () => sandbox.files.list(".")],
    ["files.exists", () => sandbox.files.exists("a.txt")],
    ["files.stat", () => sandbox.files.stat("a.txt")],
    ["files.remove", () => sandbox.files.remove("a.txt")],
    ["files.mkdir", () => sandbox.files.mkdir("d")],
    ["files.rename", () => sandbox.files.rename("a.txt", "b.txt")],
  ];
}

describe("sandbox.pause / resume (core)", () => {
  it("refuses every call path while paused with SBX_SANDBOX_PAUSED, not retryable; all works again after resume", async () => {
    const { provider, calls } = pausableProvider();
    await using sandbox = await createSandbox(provider);
    const handle = await sandbox.commands.start("hang", { stdin: true });
    await sandbox.pause();
    await sandbox.pause();
    expect(calls).toEqual(["pause"]);
    expect(sandbox.paused).toBe(true);
    for (const [name, call] of [...everyCall(sandbox), ["writeStdin", () => handle.writeStdin("x")] as [string, () => Promise<unknown>]]) {
      const error = (await caught(call)) as { code?: string; retryable?: boolean; name?: string };
      expect(error.code, name).toBe("SBX_SANDBOX_PAUSED");
      expect(error.retryable, name).toBe(false);
      expect(error.name, name).toBe("SandboxPausedError");
    }
    await sandbox.resume();
    await sandbox.resume();
    expect(calls).toEqual(["pause", "resume"]);
    expect(sandbox.paused).toBe(false);
    expect((await sandbox.commands.run("echo back")).stdout).toBe("back\n");
    const record = sandbox.audit().policies.pauses!;
    expect((record.applied as Array<{ action: string }>).map((change) => change.action)).toEqual(["pause", "resume"]);
    expect(String(record.enforcement)).toContain("memory: nothing runs");
    await handle.kill();
  });

  it("a pause the backend could not verify leaves the sandbox running, and the error is the backend's", async () => {
    const { provider } = pausableProvider({ pauseFails: true });
    await using sandbox = await createSandbox(provider);
    const error = (await caught(() => sandbox.pause())) as { code?: string };
    expect(error.code).toBe("SBX_PROVIDER");
    expect(sandbox.paused).toBe(false);
    expect((await sandbox.commands.run("echo running")).stdout).toBe("running\n");
    expect(sandbox.audit().policies.pauses).toBeUndefined();
  });

  it("a failed resume leaves the sandbox paused (nothing says its processes run)", async () => {
    const { provider } = pausableProvider({ resumeFails: true });
    await using sandbox = await createSandbox(provider);
    await sandbox.pause();
    await caught(() => sandbox.resume());
    expect(sandbox.paused).toBe(true);
    expect(((await caught(() => sandbox.commands.run("echo hi"))) as { code?: string }).code).toBe("SBX_SANDBOX_PAUSED");
  });

  it("kill() works while paused; later calls say closed, not paused", async () => {
    const { provider } = pausableProvider();
    const sandbox = await createSandbox(provider);
    await sandbox.pause();
    await sandbox.kill();
    expect((await sandbox.ended).reason).toBe("killed");
    expect(((await caught(() => sandbox.commands.run("echo hi"))) as { code?: string }).code).toBe("SBX_SANDBOX_CLOSED");
    expect(((await caught(() => sandbox.resume())) as { code?: string }).code).toBe("SBX_SANDBOX_CLOSED");
  });

  it("without PAUSE both are refused naming the backends that have it, and nothing is paused", async () => {
    await using sandbox = await createSandbox(createMemoryProvider());
    for (const call of [() => sandbox.pause(), () => sandbox.resume()]) {
      const error = (await caught(call)) as { code?: string; capability?: string; supportedBy?: string[] };
      expect(error.code).toBe("SBX_CAPABILITY_NOT_SUPPORTED");
      expect(error.capability).toBe("PAUSE");
      expect(error.supportedBy).toContain("docker");
      expect(error.supportedBy).not.toContain("memory");
    }
    expect(sandbox.paused).toBe(false);
  });
});
