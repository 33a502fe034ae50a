import { createSandbox, isSbxError } from "@sbx/core";
import { describe, expect, it } from "vitest";
import { createSandboxProvider } from "../src/index.js";

/**
 * Live tests against real Modal (they create real sandboxes and use account credit). They run only when
 * MODAL_TOKEN_ID and MODAL_TOKEN_SECRET are set and MODAL_SERVER_URL does not point at a local emulator.
 * Run: MODAL_TOKEN_ID=ak-... MODAL_TOKEN_SECRET=as-... npx vitest run test/live.test.ts (from packages/modal).
 * The network test reaches no server: it checks that a blocked sandbox cannot open a socket to a TEST-NET address
 * (192.0.2.1, reserved for documentation, never routed), never sends traffic to a real public address.
 */
function liveSkipReason(): string | undefined {
  if (!process.env.MODAL_TOKEN_ID || !process.env.MODAL_TOKEN_SECRET) return "MODAL_TOKEN_ID and MODAL_TOKEN_SECRET are not set";
  const server = process.env.MODAL_SERVER_URL;
  if (server && /\/\/(127\.|localhost|\[::1\])/.test(server)) return `MODAL_SERVER_URL points at a local emulator (${server})`;
  return undefined;
}

const skipReason = liveSkipReason();
if (skipReason)
  console.warn(`[@sbx/modal] SKIPPING live Modal tests: ${skipReason}. Set MODAL_TOKEN_ID and MODAL_TOKEN_SECRET (and no emulator URL) to run them.`);

describe.skipIf(skipReason !== undefined)(`@sbx/modal live against real Modal${skipReason ? ` (skipped: ${skipReason})` : ""}`, () => {
  const provider = createSandboxProvider({ appName: "sbx-live-tests" });

  it("creates a sandbox in the workspace, runs commands with exact bytes, stdin and exit codes, round-trips files, kills trees", async () => {
    await using sandbox = await createSandbox(provider, { timeoutMs: 120_000, limits: { cpus: 0.5, memoryMiB: 512 } });
    expect((await sandbox.commands.run("pwd")).stdout.trim()).toBe("/workspace");
    const result = await sandbox.commands.run("printf 'ok\\377'; exit 3");
    expect(result.exitCode).toBe(3);
    expect([...result.stdoutBytes]).toEqual([0x6f, 0x6b, 0xff]);
    expect((await sandbox.commands.run("cat", { stdin: "piped" })).stdout).toBe("piped");
    await sandbox.files.write("live.txt", "hello");
    expect(await sandbox.files.read("live.txt")).toBe("hello");
    const background = await sandbox.commands.start("sleep 60 & sleep 60 & wait");
    await background.kill();
    expect((await background.wait()).exitCode).toBe(137);
    expect((await sandbox.commands.run("ps -eo args 2>/dev/null | grep -c '^sleep 60$' || true")).stdout.trim()).toBe("0");
  }, 300_000);

  it("deny is blockNetwork: a socket to a never-routed TEST-NET address fails, and the audit record says how Modal enforces it", async () => {
    await using sandbox = await createSandbox(provider, { timeoutMs: 60_000 });
    const probe = await sandbox.commands.run(
      "python3 -c \"import socket; s=socket.socket(); s.settimeout(3); print(s.connect_ex(('192.0.2.1', 80)) != 0)\"",
    );
    expect(probe.stdout.trim()).toBe("True");
    expect(sandbox.audit().policies.network.enforcement).toContain("blockNetwork: true");
  }, 300_000);

  it("reconnects by id and sees the files", async () => {
    await using first = await createSandbox(provider, { timeoutMs: 60_000 });
    await first.files.write("kept.txt", "still here");
    const { connectSandbox } = await import("@sbx/core");
    await using second = await connectSandbox(provider, first.id);
    expect(await second.files.read("kept.txt")).toBe("still here");
  }, 300_000);

  it("a wrong token is BackendUnavailableError with how to get one", async () => {
    const error = await createSandbox(createSandboxProvider({ tokenId: "ak-0000000000000000", tokenSecret: "as-0000000000000000" })).catch(
      (caught: unknown) => caught,
    );
    expect(isSbxError(error, "SBX_BACKEND_UNAVAILABLE")).toBe(true);
  }, 60_000);
});
