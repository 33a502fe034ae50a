/**
 * Filesystem snapshots and named images (ADR 0062) with the unmodified `modal` 0.11.1 SDK: `snapshotFilesystem()`
 * (the task command router's `TaskSnapshotFilesystem`) gives an image a new sandbox starts from with the files and
 * nothing of the environment; `publish`, `fromName`, `ImageListTags` and `ImageNameDelete` name it; `images.delete`
 * makes it unusable and frees the Docker image. Every sandbox is a real container.
 */
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { ModalClient, type Sandbox } from "modal";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startModalEmulator, type ModalEmulator } from "../src/index.js";
import { skipDockerTests, testImage } from "./docker-availability.js";

const run = promisify(execFile);
let emulator: ModalEmulator;

beforeAll(async () => {
  if (!skipDockerTests) emulator = await startModalEmulator({ image: testImage });
});
afterAll(async () => {
  await emulator?.stop();
});

function client(): ModalClient {
  const previous = process.env.MODAL_SERVER_URL;
  process.env.MODAL_SERVER_URL = emulator.serverUrl;
  try {
    return new ModalClient({ tokenId: emulator.tokenId, tokenSecret: emulator.tokenSecret, logLevel: "error" });
  } finally {
    if (previous === undefined) delete process.env.MODAL_SERVER_URL;
    else process.env.MODAL_SERVER_URL = previous;
  }
}

async function output(sandbox: Sandbox, command: string): Promise<string> {
  const process = await sandbox.exec(["sh", "-c", command]);
  const [stdout] = await Promise.all([process.stdout.readText(), process.wait()]);
  return stdout;
}

describe.skipIf(skipDockerTests)("images and filesystem snapshots", () => {
  it(
    "snapshotFilesystem gives an image with the files and none of the environment; named, listed, deleted; the Docker image freed",
    { timeout: 240_000 },
    async () => {
      const modal = client();
      const app = await modal.apps.fromName("sbx-emulator-images", { createIfMissing: true });
      const source = await modal.sandboxes.create(app, modal.images.fromRegistry("python:3.12-slim"), {
        workdir: "/workspace",
        env: { SOURCE_ONLY: "from-source" },
      });
      let copy: Sandbox | undefined;
      try {
        expect(await output(source, 'echo kept > /workspace/kept.txt && printf "%s" "$SOURCE_ONLY"')).toBe("from-source");
        const image = await source.snapshotFilesystem({ ttlMs: null });
        expect(image.imageId).toMatch(/^im-/);
        const stored = emulator.snapshotDockerImage(image.imageId)!;
        const config = JSON.parse((await run("docker", ["image", "inspect", "--format", "{{json .Config}}", stored])).stdout) as { Env: string[] };
        expect(config.Env.some((entry) => entry.startsWith("SOURCE_ONLY="))).toBe(false);

        await image.publish(`snap-test:${image.imageId}`);
        expect((await modal.images.fromName(`snap-test:${image.imageId}`)).imageId).toBe(image.imageId);
        const listed = await modal.cpClient.imageListTags({
          environmentName: "",
          tagPrefix: "snap-test:",
          maxObjects: 100,
          pageToken: "",
          imageId: "",
        });
        expect(listed.items.map((item) => [item.tag, item.imageId])).toEqual([[`snap-test:${image.imageId}`, image.imageId]]);
        await expect(
          modal.cpClient.imageListTags({ environmentName: "", tagPrefix: "", maxObjects: 101, pageToken: "", imageId: "" }),
        ).rejects.toThrow(/max_objects/);

        copy = await modal.sandboxes.create(app, await modal.images.fromId(image.imageId), { workdir: "/workspace" });
        expect(await output(copy, 'cat /workspace/kept.txt; printf "%s" "${SOURCE_ONLY:-unset}"')).toBe("kept\nunset");

        await modal.images.delete(image.imageId);
        await expect(modal.images.fromId(image.imageId)).rejects.toThrow(/Could not find image/);
        await expect(modal.images.fromName(`snap-test:${image.imageId}`)).rejects.toThrow(/not found/);
        expect(emulator.snapshotDockerImage(image.imageId)).toBeUndefined();
        await modal.cpClient.imageNameDelete({ tag: `snap-test:${image.imageId}` });
        expect(
          (await modal.cpClient.imageListTags({ environmentName: "", tagPrefix: "snap-test:", maxObjects: 100, pageToken: "", imageId: "" })).items,
        ).toEqual([]);
        // The Docker image is removed once the copy that runs from it is gone.
        await copy.terminate();
        copy = undefined;
        await expect(run("docker", ["image", "inspect", stored])).rejects.toThrow(/No such image/);
      } finally {
        await copy?.terminate();
        await source.terminate();
      }
    },
  );
});
