/**
 * Snapshots on Modal (ADR 0062), through the emulator: nothing secret reaches what the emulator stores for a
 * snapshot (the Docker image behind the Modal image: its config, its history, every layer's bytes), the workspace is
 * in it, running processes are not, policies are the new create's, and only sbx's snapshots are listed or deleted.
 * The portable behaviour is the contract group `snapshots.*`. Skips loudly without Docker.
 */
import { execFile, spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { promisify } from "node:util";
import { createSandbox, credential, deleteSnapshot, isSbxError, listSnapshots, type SandboxSnapshot } from "@sbx/core";
import { shareEmulator } from "@sbx/emulator-kit/testing";
import { startModalEmulator } from "@sbx/modal-emulator";
import { afterAll, describe, expect, it } from "vitest";
import { createSandboxProvider } from "../src/index.js";

const run = promisify(execFile);
const shared = shareEmulator({ start: () => startModalEmulator({}), backend: "modal", label: "@sbx/modal snapshot tests" });

function provider() {
  return createSandboxProvider({
    tokenId: shared.emulator!.tokenId,
    tokenSecret: shared.emulator!.tokenSecret,
    serverUrl: shared.emulator!.serverUrl,
    logLevel: "error",
  });
}

/** Every snapshot a test here took, deleted after the file whatever happened. */
const taken = new Set<string>();

afterAll(async () => {
  if (!shared.emulator) return;
  for (const id of taken) await deleteSnapshot(provider(), id).catch(() => false);
});

/** Which of `needles` occur in the bytes `docker save <image>` writes (a needle split across two chunks is found too). */
async function savedImageHolds(image: string, needles: readonly string[]): Promise<Set<string>> {
  const patterns = needles.map((needle) => Buffer.from(needle, "utf8"));
  const overlap = Math.max(...patterns.map((pattern) => pattern.byteLength)) - 1;
  const found = new Set<string>();
  const save = spawn("docker", ["save", image], { stdio: ["ignore", "pipe", "inherit"] });
  const exited = new Promise<number | null>((resolve) => save.on("close", resolve));
  let tail = Buffer.alloc(0);
  let total = 0;
  for await (const chunk of save.stdout) {
    const bytes = Buffer.concat([tail, chunk as Buffer]);
    total += (chunk as Buffer).byteLength;
    patterns.forEach((pattern, index) => {
      if (bytes.indexOf(pattern) !== -1) found.add(needles[index]!);
    });
    tail = bytes.subarray(Math.max(0, bytes.byteLength - overlap));
  }
  expect(await exited).toBe(0);
  expect(total).toBeGreaterThan(1024 * 1024);
  return found;
}

describe("snapshots on Modal (emulator)", () => {
  it(
    "no secret, credential, environment value or label reaches what the emulator stores; the workspace does, a running process does not",
    { timeout: 300_000 },
    async (context) => {
      if (!shared.emulator) return context.skip(`Modal emulator unavailable: ${shared.unavailable}`);
      const emulator = shared.emulator;
      const modal = provider();
      const secret = `sbx-secret-${randomUUID()}`;
      const environmentValue = `sbx-env-${randomUUID()}`;
      const labelValue = `sbx-label-${randomUUID()}`;
      const onlyInMemory = `sbx-memory-${randomUUID()}`;
      const fileContent = `sbx-file-${randomUUID()}`;
      const issued: string[] = [];
      const token = credential({
        id: `sbx-modal-snapshot-test-${randomUUID()}`,
        issue: () => {
          const value = `sbx-credential-${randomUUID()}`;
          issued.push(value);
          return { value };
        },
        revoke: () => {},
      });
      await using sandbox = await createSandbox(modal, {
        secrets: { SNAPSHOT_SECRET: secret, SNAPSHOT_TOKEN: token },
        env: { SNAPSHOT_ENV: environmentValue },
        metadata: { "snapshot-test": labelValue },
      });
      expect(issued.length).toBe(1);
      const credentialValue = issued[0]!;
      // The secrets reach commands (so they were really in play).
      expect((await sandbox.commands.run('printf "%s %s %s" "$SNAPSHOT_SECRET" "$SNAPSHOT_TOKEN" "$SNAPSHOT_ENV"')).stdout).toBe(
        `${secret} ${credentialValue} ${environmentValue}`,
      );
      await sandbox.files.write("notes/kept.txt", fileContent);
      expect((await sandbox.commands.run("pwd")).stdout).toBe("/workspace\n");
      // A value a command holds only in its own environment, in a process still running at the snapshot.
      const background = await sandbox.commands.start(`ONLY_IN_MEMORY=${onlyInMemory}; export ONLY_IN_MEMORY; exec sleep 300`);
      expect((await sandbox.commands.run("ps -eo args= | grep -c '^sleep 300$'")).stdout.trim()).toBe("1");

      const snapshot = await sandbox.snapshot();
      taken.add(snapshot.id);
      expect(snapshot.id).toMatch(/^im-[A-Za-z0-9]+$/);
      expect(snapshot.backend).toBe("modal");
      await background.kill();

      // What the emulator stores: a Docker image made by `docker export` → `docker import`.
      const stored = emulator.snapshotDockerImage(snapshot.id);
      expect(stored).toMatch(/^modal-emulator-snapshot-/);
      const secrets = [secret, credentialValue, environmentValue, labelValue, onlyInMemory];
      const [image, base] = (
        await Promise.all([run("docker", ["image", "inspect", stored!]), run("docker", ["image", "inspect", "sbx-test/python:3.11"])])
      ).map((output) => (JSON.parse(output.stdout) as Array<{ Config: { Env?: string[]; User?: string; Labels?: Record<string, string> } }>)[0]!);
      const described = JSON.stringify(image);
      for (const value of [...secrets, "SNAPSHOT_SECRET", "SNAPSHOT_TOKEN", "SNAPSHOT_ENV", "snapshot-test"]) expect(described).not.toContain(value);
      expect(image!.Config.Env).toEqual(base!.Config.Env);
      expect(image!.Config.User ?? "").toBe(base!.Config.User ?? "");
      const history = (await run("docker", ["history", "--no-trunc", stored!])).stdout;
      for (const value of secrets) expect(history).not.toContain(value);
      // Every byte of the image: the workspace's file is there (the scan sees inside), no secret is.
      expect([...(await savedImageHolds(stored!, [...secrets, fileContent]))]).toEqual([fileContent]);

      // A sandbox from it: the file at the same absolute path; the process, the environment and the labels are not.
      await using copy = await createSandbox(modal, { fromSnapshot: snapshot.id });
      expect((await copy.commands.run("cat /workspace/notes/kept.txt")).stdout).toBe(fileContent);
      expect((await copy.commands.run("ps -eo args= | grep -c '^sleep 300$'")).stdout.trim()).toBe("0");
      expect((await copy.commands.run('printf "%s|%s|%s" "${SNAPSHOT_SECRET:-none}" "${SNAPSHOT_TOKEN:-none}" "${SNAPSHOT_ENV:-none}"')).stdout).toBe(
        "none|none|none",
      );
      const report = emulator.inspectSandbox(copy.id)!;
      expect(report.definition.environmentNames).toEqual([]);
      expect(report.definition.imageId).toBe(snapshot.id);
      expect(copy.audit().policies.snapshot).toMatchObject({ requested: { fromSnapshot: snapshot.id }, applied: { image: snapshot.id } });
    },
  );

  it(
    "policies are the new create's: egress allowed at the source is denied in the copy; limits are the copy's own",
    { timeout: 300_000 },
    async (context) => {
      if (!shared.emulator) return context.skip(`Modal emulator unavailable: ${shared.unavailable}`);
      const emulator = shared.emulator;
      const modal = provider();
      await using source = await createSandbox(modal, { network: { egress: "allow" }, limits: { cpus: 1, memoryMiB: 512 } });
      await source.files.write("marker.txt", "files only");
      expect(emulator.inspectSandbox(source.id)!.network.mode).not.toBe("none");
      const snapshot = await source.snapshot();
      taken.add(snapshot.id);
      await using copy = await createSandbox(modal, { fromSnapshot: snapshot.id, limits: { cpus: 0.5, memoryMiB: 256 } });
      expect(await copy.files.read("marker.txt")).toBe("files only");
      const report = emulator.inspectSandbox(copy.id)!;
      expect(report.network.mode).toBe("none");
      expect(report.dockerResources).toEqual({ nanoCpus: 500_000_000, memoryBytes: 256 * 1024 * 1024 });
      expect((await copy.commands.run("ls /sys/class/net")).stdout.split(/\s+/).filter(Boolean)).toEqual(["lo"]);
      expect((copy.audit().policies.network.requested as { egress: string }).egress).toBe("deny");
    },
  );

  it("only sbx's snapshots are deleted: another image's id is none of them, a malformed id is refused, a target with fromSnapshot is refused", async (context) => {
    if (!shared.emulator) return context.skip(`Modal emulator unavailable: ${shared.unavailable}`);
    const modal = provider();
    await using sandbox = await createSandbox(modal);
    // The registry image the sandbox runs is a Modal image too, but not an sbx snapshot: not listed, not deleted.
    const registryImage = shared.emulator.inspectSandbox(sandbox.id)!.definition.imageId;
    expect(registryImage).toMatch(/^im-/);
    expect((await listSnapshots(modal)).map((entry) => entry.id)).not.toContain(registryImage);
    expect(await deleteSnapshot(modal, registryImage)).toBe(false);
    await using again = await createSandbox(modal);
    expect(shared.emulator.inspectSandbox(again.id)!.definition.imageId).toBe(registryImage);
    const malformed = await deleteSnapshot(modal, "sbx-snapshot:0123").catch((error: unknown) => error);
    expect(isSbxError(malformed, "SBX_INVALID_ARGUMENT")).toBe(true);
    const snapshot: SandboxSnapshot = await sandbox.snapshot();
    taken.add(snapshot.id);
    const withTarget = await createSandbox(`modal://python:3.12-slim`, {
      fromSnapshot: snapshot.id,
      settings: {
        tokenId: shared.emulator.tokenId,
        tokenSecret: shared.emulator.tokenSecret,
        serverUrl: shared.emulator.serverUrl,
        logLevel: "error",
      },
    }).catch((error: unknown) => error);
    expect(isSbxError(withTarget, "SBX_INVALID_ARGUMENT")).toBe(true);
    expect((withTarget as { field: string }).field).toBe("target");
    expect(await deleteSnapshot(modal, snapshot.id)).toBe(true);
    taken.delete(snapshot.id);
    expect(shared.emulator.snapshotDockerImage(snapshot.id)).toBeUndefined();
  });
});
