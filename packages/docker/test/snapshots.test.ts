/**
 * Snapshots on Docker (ADR 0056): nothing secret survives into a snapshot image (its config, its history, every
 * layer's bytes), policies are applied afresh at each create from it, files come back and processes do not, and
 * snapshots are listed and deleted (only sbx's). The portable behaviour is the contract group `snapshots.*`.
 */
import { execFile } from "node:child_process";
import { randomUUID } from "node:crypto";
import type { Readable } from "node:stream";
import { promisify } from "node:util";
import { credential, deleteSnapshot, isSbxError, listSnapshots, type SandboxSnapshot } from "@sbx/core";
import { afterAll, expect, it } from "vitest";
import { createSandboxProvider } from "../src/index.js";
import { createTestSandbox, describeWithDocker, docker, TEST_IMAGE } from "./docker-test-environment.js";

const run = promisify(execFile);

/** Every snapshot a test here took, deleted after the file whatever happened (never an image the tests did not make). */
const taken = new Set<string>();

/** Takes a snapshot and remembers it for deletion. */
async function snapshotOf(sandbox: { snapshot(): Promise<SandboxSnapshot> }): Promise<SandboxSnapshot> {
  const snapshot = await sandbox.snapshot();
  taken.add(snapshot.id);
  return snapshot;
}

afterAll(async () => {
  // The engine removes a killed sandbox's container (AutoRemove) a moment after kill() resolves, and refuses to delete
  // the image until then: retried for up to 20 s per snapshot.
  for (const id of taken) {
    for (let attempt = 0; attempt < 80; attempt++) {
      const outcome = await deleteSnapshot(createSandboxProvider(), id).catch((error: unknown) => error);
      if (typeof outcome === "boolean") break;
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  }
});

/** Which of `needles` occur in the stream's bytes (a needle split across two chunks is found too). */
async function occurrences(stream: Readable, needles: readonly string[]): Promise<Set<string>> {
  const patterns = needles.map((needle) => Buffer.from(needle, "utf8"));
  const overlap = Math.max(...patterns.map((pattern) => pattern.byteLength)) - 1;
  const found = new Set<string>();
  let tail = Buffer.alloc(0);
  let total = 0;
  for await (const chunk of stream) {
    const bytes = Buffer.concat([tail, chunk as Buffer]);
    total += (chunk as Buffer).byteLength;
    patterns.forEach((pattern, index) => {
      if (bytes.indexOf(pattern) !== -1) found.add(needles[index]!);
    });
    tail = bytes.subarray(Math.max(0, bytes.byteLength - overlap));
  }
  expect(total).toBeGreaterThan(1024 * 1024);
  return found;
}

describeWithDocker("snapshots on Docker", () => {
  it(
    "no secret, credential, environment value, label or owner reaches the snapshot's config, history or layers; files do, processes do not",
    { timeout: 300_000 },
    async () => {
      const secret = `sbx-secret-${randomUUID()}`;
      const environmentValue = `sbx-env-${randomUUID()}`;
      const labelValue = `sbx-label-${randomUUID()}`;
      const onlyInMemory = `sbx-memory-${randomUUID()}`;
      const fileContent = `sbx-file-${randomUUID()}`;
      const issued: string[] = [];
      const token = credential({
        id: `sbx-snapshot-test-${randomUUID()}`,
        issue: () => {
          const value = `sbx-credential-${randomUUID()}`;
          issued.push(value);
          return { value };
        },
        revoke: () => {},
      });
      await using sandbox = await createTestSandbox({
        secrets: { SNAPSHOT_SECRET: secret, SNAPSHOT_TOKEN: token },
        env: { SNAPSHOT_ENV: environmentValue },
        metadata: { "snapshot-test": labelValue },
      });
      expect(issued.length).toBe(1);
      const credentialValue = issued[0]!;
      // The secrets reach commands (so they were really in play) and are used, never written to disk.
      expect((await sandbox.commands.run('printf "%s %s" "$SNAPSHOT_SECRET" "$SNAPSHOT_TOKEN"')).stdout).toBe(`${secret} ${credentialValue}`);
      await sandbox.files.write("notes/kept.txt", fileContent);
      // A value a command holds only in its own environment and memory, in a process still running at the snapshot.
      const background = await sandbox.commands.start(`ONLY_IN_MEMORY=${onlyInMemory}; export ONLY_IN_MEMORY; exec sleep 300`);
      await sandbox.runCode(`held = "${onlyInMemory}"`);
      expect((await sandbox.commands.run("ps -eo args= | grep -c '^sleep 300$'")).stdout.trim()).toBe("1");

      const snapshot = await snapshotOf(sandbox);
      expect(snapshot.id).toMatch(/^sbx-snapshot:[0-9a-f]{32}$/);
      expect(snapshot.backend).toBe("docker");
      expect(snapshot.sizeBytes).toBeGreaterThan(fileContent.length);
      await background.kill();

      const secrets = [secret, credentialValue, environmentValue, labelValue, onlyInMemory];
      // The image's config (and the config of the container it was committed from), as the engine reports them.
      const image = await docker.getImage(snapshot.id).inspect();
      const base = await docker.getImage(TEST_IMAGE).inspect();
      const described = JSON.stringify(image);
      for (const value of secrets) expect(described).not.toContain(value);
      for (const name of [
        "sbx.owner.pid",
        "sbx.owner.host",
        "sbx.session",
        "sbx.expires-at",
        "sbx.policy",
        "sbx.managed",
        "sbx.metadata.snapshot-test",
      ])
        expect(described).not.toContain(name);
      const addedLabels = Object.keys(image.Config.Labels ?? {}).filter((name) => !(name in (base.Config.Labels ?? {})));
      expect(addedLabels.sort()).toEqual([
        "sbx.snapshot",
        "sbx.snapshot.base-image",
        "sbx.snapshot.created-at",
        "sbx.snapshot.size-bytes",
        "sbx.snapshot.workspace",
      ]);
      expect(image.Config.Env).toEqual(base.Config.Env);
      expect(image.Config.Entrypoint).toEqual(base.Config.Entrypoint);
      expect(image.Config.Cmd).toEqual(base.Config.Cmd);
      expect(image.Config.User).toBe(base.Config.User);
      // Its history, as `docker history --no-trunc` prints it.
      const history = (await run("docker", ["history", "--no-trunc", snapshot.id])).stdout;
      expect(history).toContain("sbx snapshot");
      for (const value of [...secrets, "sbx-deadline", "sbx.owner"]) expect(history).not.toContain(value);
      // Every layer's bytes (`docker save`): the file written is there (the scan sees inside the archive), no secret is.
      const found = await occurrences((await docker.getImage(snapshot.id).get()) as Readable, [...secrets, fileContent]);
      expect([...found]).toEqual([fileContent]);

      // A sandbox from it: the file is there, owned by its own user; the process and the code's memory are not.
      await using copy = await createTestSandbox({ fromSnapshot: snapshot.id });
      expect(await copy.files.read("notes/kept.txt")).toBe(fileContent);
      expect((await copy.commands.run("stat -c %u notes/kept.txt && id -u")).stdout.split("\n").slice(0, 2)).toEqual(["10001", "10001"]);
      expect((await copy.commands.run("ps -eo args= | grep -c '^sleep 300$'")).stdout.trim()).toBe("0");
      expect((await copy.runCode("held")).error?.name).toBe("NameError");
      expect((await copy.commands.run('printf "%s" "${SNAPSHOT_SECRET:-none}"')).stdout).toBe("none");
    },
  );

  it(
    "policies are applied afresh at each create from a snapshot: egress, user, limits, labels, owner and deadline are the new sandbox's own",
    { timeout: 300_000 },
    async () => {
      await using source = await createTestSandbox({
        network: { egress: "allow" },
        user: "root",
        limits: { memoryMiB: 768 },
        metadata: { origin: "source" },
        timeoutMs: 600_000,
      });
      await source.files.write("made-by-root.txt", "root's file");
      // The source has a network interface besides loopback; its files are root's.
      expect((await source.commands.run("ls /sys/class/net")).stdout.split("\n").filter(Boolean).sort()).not.toEqual(["lo"]);
      const snapshot = await snapshotOf(source);
      const before = Date.now();
      await using copy = await createTestSandbox({ fromSnapshot: snapshot.id, metadata: { origin: "copy" }, timeoutMs: 120_000 });
      // Measured from inside: loopback only (egress denied by default), the default user, the file now that user's.
      expect((await copy.commands.run("ls /sys/class/net")).stdout.split("\n").filter(Boolean)).toEqual(["lo"]);
      expect((await copy.commands.run("id -u")).stdout.trim()).toBe("10001");
      expect((await copy.commands.run("cat made-by-root.txt; stat -c ' %u' made-by-root.txt")).stdout).toBe("root's file 10001\n");
      // The engine's view of the new container: its own labels, owner, deadline and limits.
      const inspect = await docker.getContainer(copy.id).inspect();
      const labels = inspect.Config.Labels ?? {};
      expect(inspect.HostConfig.NetworkMode).toBe("none");
      expect(labels["sbx.metadata.origin"]).toBe("copy");
      expect(labels["sbx.owner.pid"]).toBe(String(process.pid));
      const expiresAt = Date.parse(labels["sbx.expires-at"]!);
      expect(expiresAt).toBeGreaterThanOrEqual(before + 110_000);
      expect(expiresAt).toBeLessThanOrEqual(Date.now() + 121_000);
      expect(inspect.HostConfig.Memory).not.toBe(768 * 1024 * 1024);
      expect(JSON.parse(labels["sbx.policy"]!) as { egress: string; user: string }).toMatchObject({ egress: "deny", user: "default" });
      const audit = copy.audit();
      expect((audit.policies.network.applied as { egress: string }).egress).toBe("deny");
      expect(audit.policies.snapshot?.requested).toEqual({ fromSnapshot: snapshot.id });
    },
  );

  it(
    "a sparse file describing more bytes than the workspace holds fails the snapshot (the archive is cut at the bound, never written out in full)",
    { timeout: 300_000 },
    async () => {
      await using sandbox = await createTestSandbox();
      // 2 GiB that take no memory on the workspace's tmpfs: archived without --sparse, they would be 2 GiB on the host.
      await sandbox.commands.run("truncate -s 2G hole.bin");
      const error = await sandbox.snapshot().catch((caught: unknown) => caught);
      expect(isSbxError(error, "SBX_PROVIDER") && /grew past/.test((error as Error).message), String(error)).toBe(true);
      // The failure comes before any image or build container exists (take-snapshot.ts archives first); the sandbox is unharmed.
      expect((await sandbox.commands.run("echo alive")).stdout).toBe("alive\n");
    },
  );
  it(
    "lists and deletes only sbx snapshots: refused while a sandbox from it runs, for another image, and for a malformed id",
    { timeout: 300_000 },
    async () => {
      const provider = createSandboxProvider({ image: TEST_IMAGE });
      await using source = await createTestSandbox();
      await source.files.write("listed.txt", "x");
      const snapshot = await snapshotOf(source);
      const listed = await listSnapshots(provider);
      expect(listed.find((entry) => entry.id === snapshot.id)).toEqual(snapshot);
      const copy = await createTestSandbox({ fromSnapshot: snapshot.id });
      const inUse = await deleteSnapshot(provider, snapshot.id).catch((error: unknown) => error);
      expect(isSbxError(inUse, "SBX_INVALID_ARGUMENT") && /still used/.test((inUse as Error).message)).toBe(true);
      await copy.kill();
      // An image that is not a snapshot is never deleted, whatever id is given.
      for (const id of [TEST_IMAGE, "sbx-snapshot:latest", `sbx-snapshot:${"0".repeat(32)}x`]) {
        const refused = await deleteSnapshot(provider, id).catch((error: unknown) => error);
        expect(isSbxError(refused, "SBX_INVALID_ARGUMENT"), String(refused)).toBe(true);
      }
      expect((await docker.getImage(TEST_IMAGE).inspect()).Id).toMatch(/^sha256:/);
      // Deleting waits for the engine to let go of the removed container (AutoRemove), then frees the image.
      let deleted: boolean | unknown;
      for (let attempt = 0; attempt < 40; attempt++) {
        deleted = await deleteSnapshot(provider, snapshot.id).catch((error: unknown) => error);
        if (deleted === true) break;
        await new Promise((resolve) => setTimeout(resolve, 250));
      }
      expect(deleted).toBe(true);
      expect(await deleteSnapshot(provider, snapshot.id)).toBe(false);
      expect((await listSnapshots(provider)).map((entry) => entry.id)).not.toContain(snapshot.id);
      const gone = await createTestSandbox({ fromSnapshot: snapshot.id }).catch((error: unknown) => error);
      expect(isSbxError(gone, "SBX_INVALID_ARGUMENT") && /no snapshot/.test((gone as Error).message)).toBe(true);
    },
  );
});
