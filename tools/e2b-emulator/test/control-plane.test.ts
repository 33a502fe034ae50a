import Docker from "dockerode";
import { describe, expect, it } from "vitest";
import { skipDockerTests } from "./docker-availability.js";
import { emulatorForSuite } from "./emulator-fixture.js";
import { sdkVersions } from "./sdk-versions.js";

const docker = new Docker();

describe.skipIf(skipDockerTests)("control plane", () => {
  const emulator = emulatorForSuite({ maxTimeoutSeconds: 120 });

  describe.each(sdkVersions)("%s", (_label, Sandbox) => {
    it("creates, lists, connects, gets info, sets the timeout and kills", async () => {
      const sandbox = await Sandbox.create({ ...emulator().connectionOptions, metadata: { suite: "control" }, timeoutMs: 60_000 });
      try {
        expect(emulator().listSandboxIds()).toContain(sandbox.sandboxId);
        const info = await Sandbox.getInfo(sandbox.sandboxId, emulator().connectionOptions);
        expect(info.sandboxId).toBe(sandbox.sandboxId);
        expect(info.metadata).toEqual({ suite: "control" });
        expect(info.state).toBe("running");
        expect(info.endAt.getTime() - Date.now()).toBeGreaterThan(50_000);

        const paginator = Sandbox.list({ ...emulator().connectionOptions, query: { metadata: { suite: "control" } } });
        const listed = await paginator.nextItems();
        expect(listed.map((item) => item.sandboxId)).toContain(sandbox.sandboxId);

        const connected = await Sandbox.connect(sandbox.sandboxId, emulator().connectionOptions);
        expect((await connected.commands.run("echo connected")).stdout).toBe("connected\n");

        await sandbox.setTimeout(90_000);
        const extended = await Sandbox.getInfo(sandbox.sandboxId, emulator().connectionOptions);
        expect(extended.endAt.getTime() - Date.now()).toBeGreaterThan(80_000);

        // Above the emulator's 120 s tier cap: cut to 120 s.
        await sandbox.setTimeout(3_600_000);
        const capped = await Sandbox.getInfo(sandbox.sandboxId, emulator().connectionOptions);
        expect(capped.endAt.getTime() - capped.startedAt.getTime()).toBeLessThanOrEqual(120_000);
        expect(await sandbox.isRunning()).toBe(true);
      } finally {
        await sandbox.kill();
      }
      expect(emulator().listSandboxIds()).not.toContain(sandbox.sandboxId);
      expect(await Sandbox.kill(sandbox.sandboxId, emulator().connectionOptions)).toBe(false);
      await expect(Sandbox.getInfo(sandbox.sandboxId, emulator().connectionOptions)).rejects.toThrow(/not found/i);
      await expect(Sandbox.connect(sandbox.sandboxId, emulator().connectionOptions)).rejects.toThrow(/not found/i);
      expect(await sandbox.isRunning()).toBe(false);
    });

    it("cuts a create timeout above the cap", async () => {
      const sandbox = await Sandbox.create({ ...emulator().connectionOptions, timeoutMs: 3_600_000 });
      try {
        const info = await Sandbox.getInfo(sandbox.sandboxId, emulator().connectionOptions);
        const lifetime = info.endAt.getTime() - info.startedAt.getTime();
        expect(lifetime).toBeGreaterThan(110_000);
        expect(lifetime).toBeLessThanOrEqual(120_000);
      } finally {
        await sandbox.kill();
      }
    });

    it("rejects a wrong API key with AuthenticationError", async () => {
      await expect(Sandbox.create({ ...emulator().connectionOptions, apiKey: "e2b_" + "1".repeat(40) })).rejects.toMatchObject({
        name: "AuthenticationError",
      });
    });
  });

  it("enforces the lifetime: the container is removed when the timeout passes", async () => {
    const { Sandbox } = await import("e2b");
    // Long enough that the report is read before the lifetime ends on a loaded machine (2 s was not, in CI).
    const sandbox = await Sandbox.create({ ...emulator().connectionOptions, timeoutMs: 8_000 });
    const report = (await (await fetch(`${emulator().url}/_emulator/sandboxes/${sandbox.sandboxId}`)).json()) as { containerId: string };
    expect(report.containerId).toMatch(/^[0-9a-f]{64}$/);
    const container = await docker.getContainer(report.containerId).inspect();
    expect(container.Config.Labels["sbx.e2b-emulator"]).toBe("1");
    await new Promise((resolve) => setTimeout(resolve, 8_500));
    for (let attempt = 0; attempt < 40 && emulator().listSandboxIds().includes(sandbox.sandboxId); attempt++) {
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
    expect(emulator().listSandboxIds()).not.toContain(sandbox.sandboxId);
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    await expect(docker.getContainer(report.containerId).inspect()).rejects.toThrow();
    expect(await sandbox.isRunning()).toBe(false);
  });

  it("answers raw HTTP errors as JSON {code, message}", async () => {
    const missingKey = await fetch(`${emulator().url}/v2/sandboxes`, { method: "POST", body: "{}" });
    expect(missingKey.status).toBe(401);
    expect(await missingKey.json()).toMatchObject({ code: 401 });
    const notFound = await fetch(`${emulator().url}/sandboxes/nope`, { method: "DELETE", headers: { "X-API-KEY": emulator().apiKey } });
    expect(notFound.status).toBe(404);
    expect(await notFound.json()).toMatchObject({ code: 404, message: expect.any(String) });
    const v1 = await fetch(`${emulator().url}/sandboxes`, { headers: { "X-API-KEY": emulator().apiKey } });
    expect(v1.status).toBe(200);
    expect(Array.isArray(await v1.json())).toBe(true);
  });

  it("keeps PID 1's own deadline so containers end even without the emulator", async () => {
    const { Sandbox } = await import("e2b");
    const sandbox = await Sandbox.create({ ...emulator().connectionOptions, timeoutMs: 30_000 });
    try {
      const result = await sandbox.commands.run("cat /run/e2b-emulator-deadline; ps -o args= -p 1; ps -eo args | grep -c '[e]2b-emulator-lifetime'");
      const [deadline] = result.stdout.trim().split("\n");
      expect(Number(deadline) * 1000 - Date.now()).toBeGreaterThan(20_000);
      expect(result.stdout).toMatch(/docker-init|e2b-emulator-lifetime/);
    } finally {
      await sandbox.kill();
    }
  });
});
