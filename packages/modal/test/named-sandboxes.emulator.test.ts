import { getOrCreateSandbox, isSbxError, listSandboxes } from "@sbx/core";
import { startModalEmulator } from "@sbx/modal-emulator";
import { describe, expect, it } from "vitest";
import { shareEmulator } from "@sbx/emulator-kit/testing";
import { createSandboxProvider } from "../src/index.js";

/**
 * Names and listing on Modal (ADR 0057): a named sandbox records its policy in a tag, a caller asking for another
 * policy is refused rather than handed it, and the tag is not one of the listed labels. Through the emulator; skips
 * loudly without Docker. The race (exactly one creates) is the contract suite's `named.exactly-one-creates`.
 */
const shared = shareEmulator({ start: () => startModalEmulator({}), backend: "modal", label: "@sbx/modal named-sandbox tests" });

function provider() {
  return createSandboxProvider({
    tokenId: shared.emulator!.tokenId,
    tokenSecret: shared.emulator!.tokenSecret,
    serverUrl: shared.emulator!.serverUrl,
    logLevel: "error",
  });
}

describe("named Modal sandboxes", () => {
  it("attaching with another policy is refused; the listing shows the name and the labels without sbx's policy tag", async (context) => {
    if (!shared.emulator) return context.skip(`Modal emulator unavailable: ${shared.unavailable}`);
    const modal = provider();
    const name = `named-${Date.now().toString(36)}`;
    const first = await getOrCreateSandbox(modal, { name, metadata: { team: "blue" } });
    try {
      expect(first.created).toBe(true);
      const refused = await getOrCreateSandbox(modal, { name, user: "root" }).then(
        () => undefined,
        (error: unknown) => error,
      );
      expect(isSbxError(refused, "SBX_POLICY_NOT_ENFORCED"), String(refused)).toBe(true);
      const again = await getOrCreateSandbox(modal, { name });
      expect([again.created, again.sandbox.id]).toEqual([false, first.sandbox.id]);
      const listed = await listSandboxes(modal, { labels: { team: "blue" } });
      expect(listed.map((entry) => [entry.id, entry.name, entry.labels])).toEqual([[first.sandbox.id, name, { team: "blue" }]]);
    } finally {
      await first.sandbox.kill();
    }
    // Once it ended, the name is free: the next caller creates.
    const next = await getOrCreateSandbox(modal, { name });
    await next.sandbox.kill();
    expect(next.created).toBe(true);
  });
});
