import { randomBytes } from "node:crypto";
import type { Sandbox } from "@sbx/core";
import { afterAll, beforeAll, expect, it } from "vitest";
import type { EgressDenial } from "../src/egress/egress-proxy.js";
import { createTestSandbox, describeWithDocker, docker } from "./docker-test-environment.js";
import { fetchCommand, startLoopbackServer, type LoopbackServer } from "./egress-test-servers.js";

/**
 * Creates a Docker network on a free /28 of 198.51.100.0/24 (TEST-NET-2, a documentation range no real server uses):
 * the engine binds its gateway address on a bridge of this host, so that address is one of the host's own, assigned
 * by this test. No container is attached: the bridge stays down, which `os.networkInterfaces()` does not list.
 */
async function createTestNetwork(): Promise<{ name: string; gateway: string; subnet: string; remove: () => Promise<void> }> {
  const name = `sbx-test-host-address-${randomBytes(4).toString("hex")}`;
  const offsets = Array.from({ length: 16 }, (_, index) => index * 16).sort(() => Math.random() - 0.5);
  for (const offset of offsets) {
    const subnet = `198.51.100.${offset}/28`;
    const gateway = `198.51.100.${offset + 1}`;
    try {
      const network = await docker.createNetwork({ Name: name, Driver: "bridge", IPAM: { Config: [{ Subnet: subnet, Gateway: gateway }] } });
      return { name, gateway, subnet, remove: () => network.remove().catch(() => undefined) };
    } catch (error) {
      if (!/overlap|in use|Pool/i.test(String((error as Error).message))) throw error;
    }
  }
  throw new Error("no free /28 in 198.51.100.0/24 for the test network");
}

describeWithDocker("Docker egress allowlist: names resolving to the host's own addresses or special-purpose ranges are refused", () => {
  let network: Awaited<ReturnType<typeof createTestNetwork>>;
  let server: LoopbackServer;
  let sandbox: Sandbox;
  const denials: EgressDenial[] = [];
  /** The test's resolver: what an attacker's DNS would answer for names it controls. */
  const answers: Record<string, string[]> = {};

  beforeAll(async () => {
    // The sandbox (and its proxy) exists before the address does: the proxy must read the host's addresses per connection.
    sandbox = await createTestSandbox(
      { network: { egress: "deny", allow: ["own.test", "mapped.test"] } },
      { egressResolver: async (name: string) => answers[name] ?? [], onEgressDenied: (denial: EgressDenial) => denials.push(denial) },
    );
    network = await createTestNetwork();
    // Port 80 on an address only this test uses: the entries name no port, so the default ports (80, 443) apply.
    server = await startLoopbackServer({ address: network.gateway, port: 80 });
    answers["own.test"] = [network.gateway];
    answers["mapped.test"] = [`::ffff:${network.gateway}`];
  }, 120_000);
  afterAll(async () => {
    await sandbox?.kill();
    await server?.close();
    await network?.remove();
  });

  const run = async (command: string) => (await sandbox.commands.run(command, { timeoutMs: 30_000 })).stdout.trim();

  it("an allowed name resolving to an address this host bound after the sandbox was created is refused, and the server sees nothing", async () => {
    const gateway = network.gateway.replace(/\./g, "\\.");
    expect(await run(fetchCommand("http://own.test/"))).toMatch(
      new RegExp(`^STATUS 403 sbx egress: own\\.test:80 refused: it resolves only to non-public addresses \\(${gateway}: an address of this host`),
    );
    expect(await run(fetchCommand("http://mapped.test/"))).toMatch(
      new RegExp(
        `^STATUS 403 sbx egress: mapped\\.test:80 refused: it resolves only to non-public addresses \\(::ffff:${gateway}: an address of this host`,
      ),
    );
    expect(server.hits).toEqual([]);
    expect(denials.map((denial) => denial.host)).toEqual(["own.test", "mapped.test"]);
    expect(sandbox.audit().policies.network.enforcement).toContain("an address bound on one of this host's own interfaces (read at each connection)");
    expect(sandbox.audit().policies.network.applied).toMatchObject({
      resolver: "settings.egressResolver, called in the sbx process (answers checked like DNS)",
    });
  });

  it("an IP/CIDR entry covering the address is the explicit exception: the same name then reaches the server", async () => {
    await using covered = await createTestSandbox(
      { network: { egress: "deny", allow: ["own.test", network.subnet] } },
      { egressResolver: async (name: string) => answers[name] ?? [] },
    );
    expect((await covered.commands.run(fetchCommand("http://own.test/"), { timeoutMs: 30_000 })).stdout.trim()).toBe("STATUS 200 sbx-ok own.test");
    expect(server.hits).toEqual(["own.test"]);
  });
  // Documentation, benchmarking, 6to4-relay and discard-only ranges are proven by the table in
  // egress-special-addresses.test.ts and never by dialling them: a regression would send traffic to an address this
  // test does not own (the network rule). The integration cases above use only the test's own Docker network.
});
