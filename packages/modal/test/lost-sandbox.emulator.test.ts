import { connectSandbox, createSandbox, isSbxError } from "@sbx/core";
import { startModalEmulator } from "@sbx/modal-emulator";
import { describe, expect, it } from "vitest";
import { shareEmulator } from "@sbx/emulator-kit/testing";
import { createSandboxProvider } from "../src/index.js";

/**
 * A sandbox that ends under the adapter's feet (terminated from another process, or ended by Modal's idle timeout)
 * surfaces as SandboxNotFoundError with the SDK's error as cause, for commands and for files alike, and the audit
 * record reports the lifetime that was sent. Through the emulator; skips loudly without Docker.
 */
const shared = shareEmulator({ start: () => startModalEmulator({}), backend: "modal", label: "@sbx/modal lost-sandbox tests" });

function provider(extra: Record<string, unknown> = {}) {
  return createSandboxProvider({
    tokenId: shared.emulator!.tokenId,
    tokenSecret: shared.emulator!.tokenSecret,
    serverUrl: shared.emulator!.serverUrl,
    logLevel: "error",
    ...extra,
  });
}

describe("a Modal sandbox that ends under the adapter", () => {
  it("terminated from elsewhere: commands and file calls raise SBX_SANDBOX_NOT_FOUND with the SDK error as cause", async (context) => {
    if (!shared.emulator) return context.skip(`Modal emulator unavailable: ${shared.unavailable}`);
    const modal = provider();
    await using sandbox = await createSandbox(modal);
    await sandbox.files.write("before.txt", "x");
    const other = await connectSandbox(modal, sandbox.id);
    await other.kill();
    expect(shared.emulator.listSandboxIds()).not.toContain(sandbox.id);
    const calls: Array<() => Promise<unknown>> = [
      () => sandbox.commands.run("echo late"),
      () => sandbox.files.read("before.txt"),
      () => sandbox.files.write("after.txt", "y"),
      () => sandbox.files.list("."),
    ];
    for (const call of calls) {
      const error = await call().then(
        () => undefined,
        (caught: unknown) => caught,
      );
      expect(isSbxError(error, "SBX_SANDBOX_NOT_FOUND")).toBe(true);
      expect((error as { cause?: unknown }).cause).toBeInstanceOf(Error);
    }
    const reconnect = await connectSandbox(modal, sandbox.id).then(
      () => undefined,
      (caught: unknown) => caught,
    );
    expect(isSbxError(reconnect, "SBX_SANDBOX_NOT_FOUND")).toBe(true);
  });

  it("Modal's idle timeout (whole seconds, rounded up and recorded) ends an idle sandbox", async (context) => {
    if (!shared.emulator) return context.skip(`Modal emulator unavailable: ${shared.unavailable}`);
    await using sandbox = await createSandbox(provider({ idleTimeoutMs: 1_500 }), { timeoutMs: 60_500 });
    const lifetime = sandbox.audit().policies.lifetime;
    expect(lifetime.requested).toEqual({ timeoutMs: 60_500, idleTimeoutMs: 1_500 });
    expect(lifetime.applied).toEqual({ timeoutMs: 61_000, idleTimeoutMs: 2_000 });
    expect(sandbox.audit().notes.join("\n")).toContain("rounded up");
    expect(shared.emulator.inspectSandbox(sandbox.id)!.definition).toMatchObject({ timeoutSeconds: 61, idleTimeoutSeconds: 2 });
    expect((await sandbox.commands.run("echo busy")).stdout).toBe("busy\n");
    for (let waited = 0; waited < 100 && shared.emulator.listSandboxIds().includes(sandbox.id); waited++)
      await new Promise((resolve) => setTimeout(resolve, 100));
    expect(shared.emulator.inspectSandbox(sandbox.id)!.result).toMatchObject({ status: 4 });
    const error = await sandbox.commands.run("echo late").then(
      () => undefined,
      (caught: unknown) => caught,
    );
    expect(isSbxError(error, "SBX_SANDBOX_NOT_FOUND")).toBe(true);
  });
});
