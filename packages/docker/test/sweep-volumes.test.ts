import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { once } from "node:events";
import { hostname } from "node:os";
import { fileURLToPath } from "node:url";
import { afterAll, expect, it } from "vitest";
import { sweepOrphans, volumeOrphanReason } from "../src/index.js";
import { createTestSandbox, describeWithDocker, docker } from "./docker-test-environment.js";

it("volumeOrphanReason: only a volume whose owner is known gone, or whose lifetime ended, may be removed", () => {
  const later = new Date(Date.now() + 60_000).toISOString();
  const live = { "sbx.managed": "1", "sbx.owner.pid": String(process.pid), "sbx.owner.host": "h", "sbx.expires-at": later };
  expect(volumeOrphanReason(live, Date.now(), "h")).toBeUndefined();
  expect(volumeOrphanReason({ ...live, "sbx.owner.pid": "999999999" }, Date.now(), "h")).toMatch(/owner process 999999999 is gone/);
  expect(volumeOrphanReason({ ...live, "sbx.owner.pid": "999999999" }, Date.now(), "another-host")).toBeUndefined();
  expect(
    volumeOrphanReason({ ...live, "sbx.owner.host": "another-host", "sbx.expires-at": new Date(Date.now() - 1).toISOString() }, Date.now(), "h"),
  ).toMatch(/expired/);
  // Made by sbx before owner labels existed: its owner is unknown, so it stays.
  expect(volumeOrphanReason({ "sbx.managed": "1", "sbx.session": "s" }, Date.now(), "h")).toBeUndefined();
});

/** The pid of a process that has exited (a child started and waited for). */
async function deadPid(): Promise<number> {
  const child = spawn(process.execPath, ["-e", ""], { stdio: "ignore" });
  await once(child, "exit");
  return child.pid!;
}

describeWithDocker("sweepOrphans and volumes: only a dead owner's", () => {
  const session = `sweep-volumes-${randomBytes(4).toString("hex")}`;
  const made: string[] = [];
  afterAll(async () => {
    await Promise.all(
      made.map((name) =>
        docker
          .getVolume(name)
          .remove()
          .catch(() => undefined),
      ),
    );
  });

  const makeVolume = async (suffix: string, labels: Record<string, string>) => {
    const name = `${session}-${suffix}`;
    await docker.createVolume({ Name: name, Labels: { "sbx.managed": "1", "sbx.session": session, ...labels } });
    made.push(name);
    return name;
  };

  it("leaves a live owner's dangling volume (a create in flight), another host's, and a pre-label one; removes a dead owner's and an expired one", async () => {
    const later = new Date(Date.now() + 600_000).toISOString();
    const earlier = new Date(Date.now() - 1_000).toISOString();
    const live = await makeVolume("live-owner", { "sbx.owner.pid": String(process.pid), "sbx.owner.host": hostname(), "sbx.expires-at": later });
    const otherHost = await makeVolume("other-host", {
      "sbx.owner.pid": String(await deadPid()),
      "sbx.owner.host": `not-${hostname()}`,
      "sbx.expires-at": later,
    });
    const unlabelled = await makeVolume("no-owner", {});
    const dead = await makeVolume("dead-owner", { "sbx.owner.pid": String(await deadPid()), "sbx.owner.host": hostname(), "sbx.expires-at": later });
    const expired = await makeVolume("expired", {
      "sbx.owner.pid": String(process.pid),
      "sbx.owner.host": `not-${hostname()}`,
      "sbx.expires-at": earlier,
    });
    const swept = await sweepOrphans({ docker });
    expect(swept.volumes.filter((name) => name.startsWith(session)).sort()).toEqual([dead, expired].sort());
    // eslint-disable-next-line @typescript-eslint/await-thenable -- dockerode's types only know the callback overload here; without a callback it returns a promise
    const left = (await docker.listVolumes({ filters: { label: [`sbx.session=${session}`] } } as never)) as unknown as {
      Volumes: Array<{ Name: string }> | null;
    };
    expect((left.Volumes ?? []).map((volume) => volume.Name).sort()).toEqual([live, otherHost, unlabelled].sort());
  });

  it("a sandbox's workspace volume carries its owner's pid, host and expiry (what the sweep judges it by)", async () => {
    await using sandbox = await createTestSandbox();
    const inspect = await docker.getContainer(sandbox.id).inspect();
    const workspace = inspect.Mounts.find((mount) => mount.Destination === "/workspace");
    const volume = await docker.getVolume(workspace!.Name!).inspect();
    expect(volume.Labels).toMatchObject({
      "sbx.managed": "1",
      "sbx.owner.pid": String(process.pid),
      "sbx.owner.host": hostname(),
      "sbx.expires-at": inspect.Config.Labels["sbx.expires-at"],
    });
    expect(volumeOrphanReason(volume.Labels ?? {})).toBeUndefined();
  });

  it("a sweep racing sandbox creates in another process never breaks one of them", async () => {
    const creates = 6;
    const child = spawn(process.execPath, [fileURLToPath(new URL("./fixtures/create-while-swept.mjs", import.meta.url)), String(creates)], {
      cwd: fileURLToPath(new URL("..", import.meta.url)),
      stdio: ["ignore", "pipe", "inherit"],
    });
    let output = "";
    child.stdout!.setEncoding("utf8");
    child.stdout!.on("data", (text: string) => (output += text));
    const exited = once(child, "exit");
    let sweeps = 0;
    let done = false;
    void exited.then(() => (done = true));
    while (!done) {
      await sweepOrphans({ docker });
      sweeps++;
    }
    await exited;
    expect(JSON.parse(output)).toEqual({ created: creates, failures: [] });
    expect(sweeps).toBeGreaterThan(creates);
  }, 300_000);
});
