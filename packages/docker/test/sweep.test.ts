import { once } from "node:events";
import { expect, it } from "vitest";
import { orphanReason, sweepOrphans } from "../src/index.js";
import { createTestSandbox, describeWithDocker, docker } from "./docker-test-environment.js";
import { startHangingHost } from "./fixtures/hanging-host.js";

it("orphanReason: a live owner's running sandbox is never an orphan; a dead owner's or an expired one is", () => {
  const live = { "sbx.owner.pid": String(process.pid), "sbx.owner.host": "h", "sbx.expires-at": new Date(Date.now() + 60_000).toISOString() };
  expect(orphanReason(live, "running", Date.now(), "h")).toBeUndefined();
  expect(orphanReason({ ...live, "sbx.owner.pid": "999999999" }, "running", Date.now(), "h")).toMatch(/gone/);
  expect(orphanReason({ ...live, "sbx.owner.pid": "999999999" }, "running", Date.now(), "another-host")).toBeUndefined();
  // Past its label: a live owner here keeps it (setLifetime may have extended it; the owner enforces the end), a dead
  // owner's or another host's is an orphan.
  const pastLabel = { ...live, "sbx.expires-at": new Date(Date.now() - 1).toISOString() };
  expect(orphanReason(pastLabel, "running", Date.now(), "h")).toBeUndefined();
  expect(orphanReason({ ...pastLabel, "sbx.owner.pid": "999999999" }, "running", Date.now(), "h")).toMatch(/gone/);
  expect(orphanReason(pastLabel, "running", Date.now(), "another-host")).toMatch(/expired/);
  expect(orphanReason(live, "exited", Date.now(), "h")).toMatch(/not running/);
});

describeWithDocker("sweep after the host process is SIGKILLed", () => {
  it("leaves no container or volume with the dead process's labels, and never touches a live sandbox", async () => {
    await using mine = await createTestSandbox();
    // keepAfterHostExit: without it the dead-man's switch ends them before the sweep runs (see reaper.test.ts).
    const { child, session, ids } = await startHangingHost(3, { keepAfterHostExit: true });
    expect(ids).toHaveLength(3);
    const filter = { label: [`sbx.session=${session}`] };
    expect(await docker.listContainers({ all: true, filters: filter })).toHaveLength(3);
    child.kill("SIGKILL");
    await once(child, "exit");
    const swept = await sweepOrphans({ docker });
    expect(swept.containers).toEqual(expect.arrayContaining(ids));
    expect(swept.containers).not.toContain(mine.id);
    for (let attempt = 0; attempt < 50; attempt++) {
      if ((await docker.listContainers({ all: true, filters: filter })).length === 0) break;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    expect(await docker.listContainers({ all: true, filters: filter })).toHaveLength(0);
    // eslint-disable-next-line @typescript-eslint/await-thenable -- dockerode's types only know the callback overload here; without a callback it returns a promise
    const volumes = (await docker.listVolumes({ filters: { label: [`sbx.session=${session}`] } } as never)) as unknown as {
      Volumes: unknown[] | null;
    };
    expect(volumes.Volumes ?? []).toHaveLength(0);
    expect((await mine.commands.run("echo still-here")).stdout).toBe("still-here\n");
  });
});
