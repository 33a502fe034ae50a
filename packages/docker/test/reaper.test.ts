import { once } from "node:events";
import { connectSandbox } from "@sbx/core";
import { expect, it } from "vitest";
import { createSandboxProvider, sweepOrphans } from "../src/index.js";
import { describeWithDocker, docker, TEST_IMAGE } from "./docker-test-environment.js";
import { startHangingHost } from "./fixtures/hanging-host.js";

async function leftOf(session: string): Promise<{ containers: number; volumes: number }> {
  const containers = await docker.listContainers({ all: true, filters: { label: [`sbx.session=${session}`] } });
  // eslint-disable-next-line @typescript-eslint/await-thenable -- dockerode's types only know the callback overload here; without a callback it returns a promise
  const volumes = (await docker.listVolumes({ filters: { label: [`sbx.session=${session}`] } } as never)) as unknown as { Volumes: unknown[] | null };
  return { containers: containers.length, volumes: (volumes.Volumes ?? []).length };
}

describeWithDocker("no orphans without anyone's help (dead-man's switch)", () => {
  it("a host process SIGKILLed while holding 10 sandboxes: within 30 s no container and no volume of it remains", async () => {
    const { child, session, ids } = await startHangingHost(10, { keepAfterHostExit: false });
    expect(ids).toHaveLength(10);
    expect(await leftOf(session)).toEqual({ containers: 10, volumes: 10 });
    child.kill("SIGKILL");
    await once(child, "exit");
    const killedAt = Date.now();
    let left = await leftOf(session);
    while ((left.containers > 0 || left.volumes > 0) && Date.now() - killedAt < 30_000) {
      await new Promise((resolve) => setTimeout(resolve, 250));
      left = await leftOf(session);
    }
    expect(left).toEqual({ containers: 0, volumes: 0 });
  });

  it("keepAfterHostExit: the sandbox outlives its host for connect() from another process, and says so in the audit", async () => {
    const { child, session, ids } = await startHangingHost(1, { keepAfterHostExit: true });
    child.kill("SIGKILL");
    await once(child, "exit");
    await new Promise((resolve) => setTimeout(resolve, 1500));
    expect((await leftOf(session)).containers).toBe(1);
    // Any sweep on this host (another process's create sweeps, `sbx gc`) keeps it: it was made to outlive its host.
    expect((await sweepOrphans({ docker })).containers).not.toContain(ids[0]);
    expect((await leftOf(session)).containers).toBe(1);
    await using sandbox = await connectSandbox(createSandboxProvider({ image: TEST_IMAGE }), ids[0]!);
    expect((await sandbox.commands.run("id -u")).stdout).toBe("10001\n");
    expect(sandbox.audit().policies.lifetime.applied).toMatchObject({ endsWithHost: false, deadlineUser: "0:0" });
  });
});
