import { once } from "node:events";
import { hostname } from "node:os";
import { expect, it } from "vitest";
import { orphanReason, sweepOrphans, volumeOrphanReason } from "../src/index.js";
import { createTestSandbox, describeWithDocker, docker, TEST_IMAGE } from "./docker-test-environment.js";
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
  // keepAfterHostExit (policy label endsWithHost: false): its owner's death does not make it an orphan, its end does.
  const kept = { ...live, "sbx.owner.pid": "999999999", "sbx.policy": JSON.stringify({ egress: "deny", endsWithHost: false }) };
  expect(orphanReason(kept, "running", Date.now(), "h")).toBeUndefined();
  expect(orphanReason({ ...kept, "sbx.expires-at": new Date(Date.now() - 1).toISOString() }, "running", Date.now(), "h")).toBe("lifetime expired");
  expect(orphanReason({ ...kept, "sbx.policy": JSON.stringify({ egress: "deny", endsWithHost: true }) }, "running", Date.now(), "h")).toMatch(/gone/);
  // A policy label sbx did not write is no promise to keep it.
  expect(orphanReason({ ...kept, "sbx.policy": "{not json" }, "running", Date.now(), "h")).toMatch(/gone/);
});

it("volumeOrphanReason: a dangling volume of a dead owner here or past its lifetime may go; a live owner's or another host's stays", () => {
  const live = { "sbx.owner.pid": String(process.pid), "sbx.owner.host": "h", "sbx.expires-at": new Date(Date.now() + 60_000).toISOString() };
  expect(volumeOrphanReason(live, Date.now(), "h")).toBeUndefined();
  expect(volumeOrphanReason({ ...live, "sbx.owner.pid": "999999999" }, Date.now(), "h")).toBe("owner process 999999999 is gone");
  expect(volumeOrphanReason({ ...live, "sbx.owner.pid": "999999999" }, Date.now(), "another-host")).toBeUndefined();
  expect(volumeOrphanReason({ ...live, "sbx.expires-at": new Date(Date.now() - 1).toISOString() }, Date.now(), "h")).toBe("lifetime expired");
  expect(volumeOrphanReason({}, Date.now(), "h")).toBeUndefined();
});

describeWithDocker("sweep after the host process is SIGKILLed", () => {
  it("keeps a keepAfterHostExit sandbox of the dead process (it lives until its lifetime ends) and a live sandbox", async () => {
    await using mine = await createTestSandbox();
    const { child, session, ids } = await startHangingHost(3, { keepAfterHostExit: true });
    expect(ids).toHaveLength(3);
    const filter = { label: [`sbx.session=${session}`] };
    try {
      child.kill("SIGKILL");
      await once(child, "exit");
      const swept = await sweepOrphans({ docker });
      expect(swept.containers.filter((id) => ids.includes(id) || id === mine.id)).toEqual([]);
      const running = await docker.listContainers({ filters: filter });
      expect(running.map((container) => container.Id).sort()).toEqual([...ids].sort());
      expect((await mine.commands.run("echo still-here")).stdout).toBe("still-here\n");
    } finally {
      await Promise.all(
        ids.map((id) =>
          docker
            .getContainer(id)
            .remove({ force: true, v: true })
            .catch(() => undefined),
        ),
      );
    }
  });

  it("removes what a dead process left that nothing keeps (a running container and a dangling volume with its labels)", async () => {
    // What an engine restart or a failed dead-man's switch leaves: made here with the labels the sweep reads, since a
    // real sbx sandbox of a dead host ends by itself within a second (reaper.test.ts).
    const session = `sweep-test-${process.pid}-${Date.now()}`;
    const labels = { "sbx.managed": "1", "sbx.session": session, "sbx.owner.pid": "999999999", "sbx.owner.host": hostname() };
    // eslint-disable-next-line @typescript-eslint/await-thenable -- dockerode's types only know the callback overload here; without a callback it returns a promise
    await docker.createVolume({ Name: `${session}-volume`, Labels: labels } as never);
    const orphan = await docker.createContainer({ Image: TEST_IMAGE, Cmd: ["sleep", "300"], Labels: labels, HostConfig: { NetworkMode: "none" } });
    try {
      // Another test file's create may sweep it first (every create sweeps): then it is already gone, as it must be.
      await orphan.start().catch((error: { statusCode?: number }) => {
        if (error.statusCode !== 404 && error.statusCode !== 409) throw error;
      });
      await sweepOrphans({ docker });
      // A removal another sweep started may still be finishing (the engine answers 409 meanwhile).
      const filter = { label: [`sbx.session=${session}`] };
      for (let attempt = 0; attempt < 50 && (await docker.listContainers({ all: true, filters: filter })).length > 0; attempt++) {
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
      expect(await docker.listContainers({ all: true, filters: filter })).toHaveLength(0);
      // eslint-disable-next-line @typescript-eslint/await-thenable -- dockerode's types only know the callback overload here; without a callback it returns a promise
      const volumes = (await docker.listVolumes({ filters: { label: [`sbx.session=${session}`] } } as never)) as unknown as {
        Volumes: unknown[] | null;
      };
      expect(volumes.Volumes ?? []).toHaveLength(0);
    } finally {
      await orphan.remove({ force: true }).catch(() => undefined);
      await docker
        .getVolume(`${session}-volume`)
        .remove()
        .catch(() => undefined);
    }
  });
});
