import { createSandbox } from "@sbx/core";
import { startModalEmulator } from "@sbx/modal-emulator";
import { describe, expect, it } from "vitest";
import { shareEmulator } from "@sbx/emulator-kit/testing";
import { createSandboxProvider } from "../src/index.js";

/**
 * What the adapter puts on the wire for each egress policy, as the emulator decoded it from the unmodified SDK's
 * SandboxCreateV2 request (`Sandbox.network_access`), next to the audit record. Through the emulator; skips loudly
 * without Docker.
 */
const shared = shareEmulator({ start: () => startModalEmulator({}), backend: "modal", label: "@sbx/modal network translation tests" });

describe("egress policy on the wire", () => {
  it("deny is BLOCKED, allow is OPEN, an allowlist is ALLOWLIST with /32 addresses and the domains as given", async (context) => {
    if (!shared.emulator) return context.skip(`Modal emulator unavailable: ${shared.unavailable}`);
    const provider = createSandboxProvider({
      tokenId: shared.emulator.tokenId,
      tokenSecret: shared.emulator.tokenSecret,
      serverUrl: shared.emulator.serverUrl,
      logLevel: "error",
    });
    const cases: Array<
      [{ egress: "deny" | "allow"; allow?: string[] }, { networkAccessType: number; allowedCidrs: string[]; allowedDomains: string[] }]
    > = [
      [{ egress: "deny" }, { networkAccessType: 2, allowedCidrs: [], allowedDomains: [] }],
      [{ egress: "allow" }, { networkAccessType: 1, allowedCidrs: [], allowedDomains: [] }],
      [
        { egress: "deny", allow: ["10.1.2.3", "192.168.0.0/16", "PyPI.org", "pythonhosted.org", "*.pythonhosted.org"] },
        {
          networkAccessType: 3,
          allowedCidrs: ["10.1.2.3/32", "192.168.0.0/16"],
          allowedDomains: ["pypi.org", "pythonhosted.org", "*.pythonhosted.org"],
        },
      ],
    ];
    for (const [network, wire] of cases) {
      await using sandbox = await createSandbox(provider, { network });
      const report = shared.emulator.inspectSandbox(sandbox.id)!;
      expect(report.definition.networkAccess).toEqual(wire);
      expect(report.definition.workdir).toBe("/workspace");
      const record = sandbox.audit().policies.network;
      expect((record.applied as { egress: string }).egress).toBe(network.egress);
      expect(sandbox.audit().notes.join("\n")).toContain("Egress fields sent to Modal");
    }
  });
});
