import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import Docker from "dockerode";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startE2BEmulator, type E2BEmulator } from "../src/index.js";
import { skipDockerTests, testImage } from "./docker-availability.js";
import { sdkVersions } from "./sdk-versions.js";

const docker = new Docker();

/** Python one-liner run inside a sandbox: prints the HTTP status or the error class. */
function probeCommand(address: string): string {
  return (
    `python3 -c "import urllib.request,sys\n` +
    `try:\n print(urllib.request.urlopen('http://${address}:8000/', timeout=3).status)\n` +
    `except Exception as error:\n print('failed', type(error).__name__, error)"`
  );
}

interface EnforcementReport {
  networkMode: string;
  containerId: string;
  firewallRules: string[];
}

describe.skipIf(skipDockerTests)("network policy", () => {
  const suffix = randomBytes(4).toString("hex");
  const networkName = `e2b-emulator-test-${suffix}`;
  const serverContainers: Docker.Container[] = [];
  const serverAddresses: string[] = [];
  let emulator: E2BEmulator;

  beforeAll(async () => {
    await docker.createNetwork({ Name: networkName, Driver: "bridge", Labels: { "sbx.e2b-emulator.test": "1" } });
    for (const name of ["allowed", "denied"]) {
      const container = await docker.createContainer({
        Image: testImage,
        name: `e2b-emulator-test-${name}-${suffix}`,
        Cmd: ["sh", "-c", "cd /tmp && exec timeout 600 python3 -m http.server 8000"],
        Labels: { "sbx.e2b-emulator.test": "1" },
        HostConfig: { NetworkMode: networkName, AutoRemove: true },
      });
      await container.start();
      serverContainers.push(container);
      const information = await container.inspect();
      serverAddresses.push(information.NetworkSettings.Networks[networkName]!.IPAddress);
    }
    emulator = await startE2BEmulator({ image: testImage, network: networkName });
  });

  afterAll(async () => {
    await emulator?.stop();
    for (const container of serverContainers) await container.remove({ force: true }).catch(() => undefined);
    await docker
      .getNetwork(networkName)
      .remove()
      .catch(() => undefined);
  });

  async function report(sandboxId: string): Promise<EnforcementReport> {
    return (await (await fetch(`${emulator.url}/_emulator/sandboxes/${sandboxId}`)).json()) as EnforcementReport;
  }

  async function probe(sandbox: { commands: { run(command: string): Promise<{ stdout: string }> } }, address: string): Promise<string> {
    // The servers may still be starting: retry a few times while the answer is "refused".
    let output = "";
    for (let attempt = 0; attempt < 10; attempt++) {
      output = (await sandbox.commands.run(probeCommand(address))).stdout.trim();
      if (output === "200" || !output.includes("Connection refused")) return output;
      await new Promise((resolve) => setTimeout(resolve, 300));
    }
    return output;
  }

  it("joins the caller's network when internet access is allowed (the default)", async () => {
    expect(emulator.networkName).toBe(networkName);
    const { Sandbox } = await import("e2b");
    const sandbox = await Sandbox.create(emulator.connectionOptions);
    try {
      expect((await report(sandbox.sandboxId)).networkMode).toBe(networkName);
      expect(await probe(sandbox, serverAddresses[0]!)).toBe("200");
      expect(await probe(sandbox, serverAddresses[1]!)).toBe("200");
    } finally {
      await sandbox.kill();
    }
  });

  describe.each(sdkVersions)("%s", (_label, Sandbox) => {
    it("allowInternetAccess: false gives a container without network", async () => {
      const sandbox = await Sandbox.create({ ...emulator.connectionOptions, allowInternetAccess: false });
      try {
        const enforced = await report(sandbox.sandboxId);
        expect(enforced.networkMode).toBe("none");
        expect((await docker.getContainer(enforced.containerId).inspect()).HostConfig.NetworkMode).toBe("none");
        expect(await probe(sandbox, serverAddresses[0]!)).toMatch(/^failed/);
      } finally {
        await sandbox.kill();
      }
    });

    it("denyOut 0.0.0.0/0 with an allowOut IP only reaches that IP, with iptables rules removed afterwards", async () => {
      const sandbox = await Sandbox.create({
        ...emulator.connectionOptions,
        network: { denyOut: ["0.0.0.0/0"], allowOut: [serverAddresses[0]!] },
      });
      let comment: string;
      try {
        const enforced = await report(sandbox.sandboxId);
        expect(enforced.networkMode).toBe(networkName);
        expect(enforced.firewallRules.length).toBeGreaterThan(0);
        expect(enforced.firewallRules.join("\n")).toContain(`-d ${serverAddresses[0]}`);
        comment = `sbx-e2b-emulator:${sandbox.sandboxId}`;
        expect(execFileSync("iptables", ["-S", "DOCKER-USER"], { encoding: "utf8" })).toContain(comment);
        expect(await probe(sandbox, serverAddresses[0]!)).toBe("200");
        // Rejected by the firewall ("No route to host"), not refused by a closed port.
        expect(await probe(sandbox, serverAddresses[1]!)).toMatch(/^failed.*no route to host/i);
      } finally {
        await sandbox.kill();
      }
      expect(execFileSync("iptables", ["-S", "DOCKER-USER"], { encoding: "utf8" })).not.toContain(comment);
      expect(execFileSync("iptables", ["-S", "INPUT"], { encoding: "utf8" })).not.toContain(comment);
    });
  });

  it("denyOut with a single CIDR blocks only that destination", async () => {
    const { Sandbox } = await import("e2b");
    const sandbox = await Sandbox.create({ ...emulator.connectionOptions, network: { denyOut: [`${serverAddresses[1]}/32`] } });
    try {
      expect(await probe(sandbox, serverAddresses[0]!)).toBe("200");
      expect(await probe(sandbox, serverAddresses[1]!)).toMatch(/^failed/);
    } finally {
      await sandbox.kill();
    }
  });

  it("rejects domain names in allowOut with a 400 explaining the IP/CIDR-only enforcement", async () => {
    const { Sandbox } = await import("e2b");
    const error = await Sandbox.create({
      ...emulator.connectionOptions,
      network: { denyOut: ["0.0.0.0/0"], allowOut: ["example.com"] },
    }).catch((caught: unknown) => caught as Error);
    expect(error).toBeInstanceOf(Error);
    expect((error as Error).message).toMatch(/400.*IP\/CIDR/s);
    expect(emulator.listSandboxIds()).toEqual([]);
  });
});
