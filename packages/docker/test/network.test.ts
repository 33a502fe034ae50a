import type { Sandbox } from "@sbx/core";
import { afterAll, beforeAll, expect, it } from "vitest";
import { dockerServersFixture, removeDockerNetwork } from "../../../contract-tests/fixtures/docker-servers.js";
import { createTestSandbox, describeWithDocker, TEST_IMAGE } from "./docker-test-environment.js";

const probe = (url: string) =>
  `python3 -c 'import sys, urllib.request; print(urllib.request.urlopen(sys.argv[1], timeout=3).read().decode())' ${url}`;

describeWithDocker("egress, proven against a server container on a network the test created", () => {
  const fixture = dockerServersFixture({ image: TEST_IMAGE });
  let started: Awaited<ReturnType<typeof fixture.startServers>>;
  beforeAll(async () => {
    started = await fixture.startServers(1);
  });
  afterAll(async () => {
    await started?.close();
    await removeDockerNetwork(fixture.networkName);
  });

  it("denied by default: the connection fails inside the sandbox (only loopback exists)", async () => {
    await using sandbox: Sandbox = await createTestSandbox();
    const result = await sandbox.commands.run(probe(started.servers[0]!.url), { timeoutMs: 20_000 });
    expect(result.exitCode).not.toBe(0);
    expect(result.stdout).not.toContain("sbx-ok");
    const interfaces = await sandbox.commands.run("cat /proc/net/dev | tail -n +3 | cut -d: -f1");
    expect(interfaces.stdout.trim().split(/\s+/)).toEqual(["lo"]);
  });

  it("allowed on the bridge network from settings: the same server answers", async () => {
    await using sandbox: Sandbox = await createTestSandbox({ network: { egress: "allow" } }, { bridgeNetwork: fixture.networkName });
    const result = await sandbox.commands.run(probe(started.servers[0]!.url), { timeoutMs: 20_000 });
    expect(result.stdout.trim()).toBe("sbx-ok");
    expect(sandbox.audit().policies.network.applied).toMatchObject({ egress: "allow", networkMode: fixture.networkName });
  });
});
