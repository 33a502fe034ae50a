import { createSandbox, isSbxError } from "@sbx/core";
import { describe, expect, it } from "vitest";
import { createSandboxProvider } from "../src/index.js";

/**
 * Live tests against real E2B (they create real sandboxes and use account credit). They run only when
 * E2B_API_KEY is set and no emulator is configured (E2B_API_URL / E2B_SANDBOX_URL unset, or not loopback).
 * Run: E2B_API_KEY=e2b_... npx vitest run test/live.test.ts (from packages/e2b). The network test reaches no
 * server: it checks that the deny policy is what E2B reports back, never sends traffic to a public address.
 */
function liveSkipReason(): string | undefined {
  if (!process.env.E2B_API_KEY) return "E2B_API_KEY is not set";
  for (const name of ["E2B_API_URL", "E2B_SANDBOX_URL"] as const) {
    const value = process.env[name];
    if (value && /\/\/(127\.|localhost|\[::1\])/.test(value)) return `${name} points at a local emulator (${value})`;
  }
  return undefined;
}

const skipReason = liveSkipReason();
if (skipReason) console.warn(`[@sbx/e2b] SKIPPING live E2B tests: ${skipReason}. Set E2B_API_KEY (and no emulator URLs) to run them.`);

describe.skipIf(skipReason !== undefined)(`@sbx/e2b live against real E2B${skipReason ? ` (skipped: ${skipReason})` : ""}`, () => {
  const provider = createSandboxProvider();

  it("creates a sandbox, runs commands with exact bytes, round-trips files, runs code with rich results", async () => {
    await using sandbox = await createSandbox(provider, { timeoutMs: 120_000 });
    const result = await sandbox.commands.run("printf 'ok\\377'; exit 3");
    expect(result.exitCode).toBe(3);
    expect([...result.stdoutBytes]).toEqual([0x6f, 0x6b, 0xff]);
    await sandbox.files.write("live.txt", "hello");
    expect(await sandbox.files.read("live.txt")).toBe("hello");
    const execution = await sandbox.runCode("1+1");
    expect(execution.results?.find((item) => item.isMainResult)?.data["text/plain"]).toBe("2");
    const context = await sandbox.createCodeContext();
    await sandbox.runCode("x = 41", { contextId: context.id });
    expect((await sandbox.runCode("print(x + 1)", { contextId: context.id })).stdout).toBe("42\n");
  }, 180_000);

  it("deny is sent explicitly and read back; the lifetime is read back from endAt", async () => {
    await using sandbox = await createSandbox(provider, { timeoutMs: 120_000 });
    const audit = sandbox.audit();
    expect(audit.policies.network.applied).toEqual({ egress: "deny" });
    expect(audit.notes.join("\n")).toContain("allowInternetAccess");
    expect((audit.policies.lifetime.applied as { timeoutMs: number }).timeoutMs).toBeGreaterThan(100_000);
  }, 180_000);

  it("the emulator's fidelity points, checked on real E2B: a sandbox killed mid-command, mid-runCode and mid-stream is SandboxNotFoundError; envd's symlink reporting; unquoted string results", async () => {
    const { Sandbox } = await import("e2b");
    const sandbox = await createSandbox(provider, { timeoutMs: 120_000 });
    expect((await sandbox.runCode("'x' * 3")).results?.find((item) => item.isMainResult)?.data["text/plain"]).toBe("xxx");
    await sandbox.commands.run("ln -s /etc etc-dir && truncate -s 1G big.bin");
    await expect(sandbox.files.read("etc-dir/hostname")).rejects.toMatchObject({ code: "SBX_PATH", reason: "escapes-workspace" });
    const stream = (await sandbox.files.read("big.bin", { format: "stream" })).getReader();
    await stream.read();
    const command = sandbox.commands.run("sleep 60").catch((error: unknown) => error);
    const code = sandbox.runCode("import time\ntime.sleep(60)").catch((error: unknown) => error);
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    await Sandbox.kill(sandbox.id);
    expect(isSbxError(await command, "SBX_SANDBOX_NOT_FOUND")).toBe(true);
    expect(isSbxError(await code, "SBX_SANDBOX_NOT_FOUND")).toBe(true);
    let streamFailure: unknown;
    try {
      for (;;) if ((await stream.read()).done) break;
    } catch (error) {
      streamFailure = error;
    }
    expect(isSbxError(streamFailure, "SBX_SANDBOX_NOT_FOUND")).toBe(true);
    await sandbox.kill();
  }, 180_000);

  it("a wrong key is BackendUnavailableError with how to get one", async () => {
    const error = await createSandbox(createSandboxProvider({ apiKey: "e2b_0000000000000000000000000000000000000000" })).catch(
      (caught: unknown) => caught,
    );
    expect(isSbxError(error, "SBX_BACKEND_UNAVAILABLE")).toBe(true);
  }, 60_000);
});
