import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createSandbox } from "@sbx/core";
import { afterAll, beforeAll, expect, it } from "vitest";
import type { PullProgressEvent } from "../src/index.js";
import { describeWithDocker, docker, TEST_IMAGE } from "./docker-test-environment.js";

const REGISTRY = "127.0.0.1:5000";
const REMOTE_IMAGE = `${REGISTRY}/sbx-test/python:3.11`;
const registryBinary = ["/usr/bin/docker-registry", "/usr/sbin/docker-registry"].find((path) => existsSync(path));
if (!registryBinary)
  console.warn("\n[sbx] SKIPPING the image pull test: Debian's docker-registry is not installed (apt-get install -y docker-registry).\n");
const describePull = registryBinary ? describeWithDocker : describeWithDocker.skip;

describePull("pulling a missing image from a real registry on loopback", () => {
  let registry: ChildProcess | undefined;
  let directory: string;
  beforeAll(async () => {
    directory = mkdtempSync(join(tmpdir(), "sbx-registry-"));
    const config = join(directory, "registry.yml");
    writeFileSync(config, `version: 0.1\nstorage:\n  filesystem:\n    rootdirectory: ${join(directory, "data")}\nhttp:\n  addr: ${REGISTRY}\n`);
    registry = spawn(registryBinary!, ["serve", config], { stdio: "ignore" });
    for (let attempt = 0; ; attempt++) {
      const ready = await fetch(`http://${REGISTRY}/v2/`).then(
        (response) => response.ok,
        () => false,
      );
      if (ready) break;
      if (attempt > 100) throw new Error("the registry did not start on 127.0.0.1:5000");
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    // The test image plus one small layer of its own, so the pull has a layer to download (the base layer is
    // already local and the engine rightly skips it).
    const builder = `sbx-pull-layer-${process.pid}`;
    execFileSync(
      "docker",
      ["run", "--name", builder, "--network", "none", "--entrypoint", "sh", TEST_IMAGE, "-c", "head -c 2000000 /dev/urandom > /pull-layer.bin"],
      { stdio: "pipe" },
    );
    execFileSync("docker", ["commit", builder, REMOTE_IMAGE], { stdio: "pipe" });
    execFileSync("docker", ["rm", "-f", builder], { stdio: "pipe" });
    execFileSync("docker", ["push", REMOTE_IMAGE], { stdio: "pipe" });
    execFileSync("docker", ["rmi", REMOTE_IMAGE], { stdio: "pipe" });
  }, 180_000);
  afterAll(async () => {
    registry?.kill("SIGTERM");
    await docker
      .getImage(REMOTE_IMAGE)
      .remove({ force: true })
      .catch(() => {});
    rmSync(directory, { recursive: true, force: true });
  });

  it("the engine pulls it host-side, progress events reach the caller, and the sandbox runs", async () => {
    await expect(docker.getImage(REMOTE_IMAGE).inspect()).rejects.toBeDefined();
    const events: PullProgressEvent[] = [];
    await using sandbox = await createSandbox(`docker://${REMOTE_IMAGE}`, {
      settings: { onPullProgress: (event: PullProgressEvent) => events.push(event) },
    });
    expect((await sandbox.commands.run("echo pulled")).stdout).toBe("pulled\n");
    const statuses = events.map((event) => event.status);
    expect(statuses.some((status) => /Pulling from/.test(status))).toBe(true);
    expect(statuses.some((status) => /Pull complete|Download complete|Downloading|Extracting/.test(status))).toBe(true);
    expect(statuses.some((status) => /Status: Downloaded newer image/.test(status))).toBe(true);
    expect(events.every((event) => event.image === REMOTE_IMAGE)).toBe(true);
  });

  it("a missing image with pull disabled is a typed error and leaves nothing behind", async () => {
    await expect(createSandbox(`docker://${REGISTRY}/sbx-test/absent:1`, { settings: { pull: false } })).rejects.toMatchObject({
      code: "SBX_PROVIDER",
    });
    await expect(createSandbox(`docker://${REGISTRY}/sbx-test/absent:1`)).rejects.toMatchObject({ code: "SBX_PROVIDER" });
  });
});
