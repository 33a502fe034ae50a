import { spawn } from "node:child_process";
import { chmod, chown, lstat, mkdir, mkdtemp, readdir, rm, stat, symlink, writeFile } from "node:fs/promises";
import { hostname, tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createSandbox, credential, isSbxError, revokeOrphanedCredentials, type CredentialRevokeRequest } from "../src/index.ts";
import { recordFileName } from "../src/credentials/credential-store.ts";
import { caught } from "./support/caught.ts";
import { createMemoryProvider } from "./support/memory-driver.ts";

/** Another user: files planted as theirs (the tests run as root, so they can chown). */
const OTHER_UID = 12345;
const runningAsRoot = process.getuid?.() === 0;
if (!runningAsRoot) {
  if (process.env.CI || process.env.SBX_REQUIRE)
    throw new Error("The credential store plant tests need root (to create another user's files with chown).");
  console.warn("\n[sbx] SKIPPING the credential store plant tests: they need root to create another user's files.\n");
}

let stateDirectory: string;
let elsewhere: string;
const previousStateDirectory = process.env.SBX_STATE_DIR;

beforeEach(async () => {
  stateDirectory = await mkdtemp(join(tmpdir(), "sbx-credential-trust-"));
  elsewhere = await mkdtemp(join(tmpdir(), "sbx-credential-elsewhere-"));
  process.env.SBX_STATE_DIR = stateDirectory;
});

afterEach(async () => {
  if (previousStateDirectory === undefined) delete process.env.SBX_STATE_DIR;
  else process.env.SBX_STATE_DIR = previousStateDirectory;
  await rm(stateDirectory, { recursive: true, force: true });
  await rm(elsewhere, { recursive: true, force: true });
});

const store = () => join(stateDirectory, "credentials");

/** A source that records every issue and revoke. */
function recordingSource(id: string) {
  const issued: string[] = [];
  const revoked: CredentialRevokeRequest[] = [];
  const source = credential({
    id,
    retryDelayMs: 1,
    issue: ({ sandboxId }) => {
      issued.push(sandboxId);
      return { value: `value-${sandboxId}`, handle: `handle-${sandboxId}` };
    },
    revoke: (request) => void revoked.push(request),
  });
  return { source, issued, revoked };
}

/** A pid that is certainly dead: a child that has exited. */
async function deadPid(): Promise<number> {
  const child = spawn(process.execPath, ["-e", "0"]);
  await new Promise((resolve) => child.on("exit", resolve));
  return child.pid!;
}

/** The record a dead owner would have left for `sourceId`, with the handle the planter chose. */
function orphanRecord(sourceId: string, ownerPid: number) {
  return {
    version: 1,
    sourceId,
    name: "TOKEN",
    sandboxId: "victim-sandbox",
    backend: "memory",
    ownerPid,
    ownerHost: hostname(),
    ownerStartTime: null,
    state: "live",
    recordedAt: new Date().toISOString(),
    issuedAt: new Date().toISOString(),
    expiresAt: null,
    handle: "planted-handle",
    value: null,
    revokeAttempts: 0,
    lastError: null,
  };
}

describe.skipIf(!runningAsRoot)("the credential store trusts only what the caller owns", () => {
  it("a store that is a symbolic link to another user's 0777 folder is refused: nothing is written there, nothing issued", async () => {
    const planted = join(elsewhere, "theirs");
    await mkdir(planted);
    await chmod(planted, 0o777);
    await chown(planted, OTHER_UID, OTHER_UID);
    await mkdir(stateDirectory, { recursive: true });
    await symlink(planted, store());
    const token = recordingSource("trust-symlink-store");
    const provider = createMemoryProvider();
    const error = await caught(() => createSandbox(provider, { secrets: { TOKEN: token.source } }));
    expect(isSbxError(error, "SBX_CREDENTIAL_ISSUE")).toBe(true);
    expect(isSbxError((error as Error).cause, "SBX_CREDENTIAL_STORE_UNSAFE")).toBe(true);
    expect(((error as Error).cause as { reason: string }).reason).toBe("is a symbolic link");
    expect(await readdir(planted)).toEqual([]);
    expect(token.issued).toEqual([]);
    expect(provider.drivers[0]!.destroyCalls).toBe(1);
  });

  it("a 0777 store folder owned by another user is refused, and its records are not revoked", async () => {
    await mkdir(store(), { recursive: true });
    await chmod(store(), 0o777);
    await chown(store(), OTHER_UID, OTHER_UID);
    const token = recordingSource("trust-foreign-store");
    const error = await caught(() => createSandbox(createMemoryProvider(), { secrets: { TOKEN: token.source } }));
    expect(isSbxError(error, "SBX_CREDENTIAL_ISSUE")).toBe(true);
    expect(((error as Error).cause as { reason: string }).reason).toBe(`is owned by uid ${OTHER_UID}, not 0`);
    expect(await readdir(store())).toEqual([]);
    const record = orphanRecord("trust-foreign-store", await deadPid());
    await writeFile(join(store(), recordFileName(record)), JSON.stringify(record), { mode: 0o600 });
    const refusal = await caught(() => revokeOrphanedCredentials({ sources: [token.source] }));
    expect(isSbxError(refusal, "SBX_CREDENTIAL_STORE_UNSAFE")).toBe(true);
    expect(token.revoked).toEqual([]);
  });

  it("a store the caller owns but others can read is tightened to 0700; a new one is created 0700", async () => {
    const token = recordingSource("trust-fresh-store");
    const sandbox = await createSandbox(createMemoryProvider(), { secrets: { TOKEN: token.source } });
    expect((await stat(store())).mode & 0o777).toBe(0o700);
    await sandbox.kill();
    await chmod(store(), 0o755);
    await (await createSandbox(createMemoryProvider(), { secrets: { TOKEN: token.source } })).kill();
    expect((await stat(store())).mode & 0o777).toBe(0o700);
    expect(token.revoked.map((request) => request.reason)).toEqual(["kill", "kill"]);
  });

  describe("planted records are refused and reported, and their handle never reaches revoke", () => {
    async function plantAndRevoke(sourceId: string, plant: (path: string, text: string) => Promise<void>) {
      await mkdir(store(), { recursive: true, mode: 0o700 });
      const record = orphanRecord(sourceId, await deadPid());
      const path = join(store(), recordFileName(record));
      await plant(path, JSON.stringify(record));
      const token = recordingSource(sourceId);
      const warnings: string[] = [];
      const onWarning = (warning: Error & { code?: string }) => void warnings.push(`${warning.code}: ${warning.message}`);
      process.on("warning", onWarning);
      try {
        const result = await revokeOrphanedCredentials({ sources: [token.source] });
        await new Promise((resolve) => setImmediate(resolve));
        return { result, token, path, warnings, fileName: recordFileName(record) };
      } finally {
        process.off("warning", onWarning);
      }
    }

    it("a world-writable record", async () => {
      const { result, token, path, warnings, fileName } = await plantAndRevoke("trust-writable-record", async (path, text) => {
        await writeFile(path, text);
        await chmod(path, 0o666);
      });
      expect(result).toEqual({ revoked: [], failed: [], skipped: 0, refused: [{ fileName, reason: "can be written by others (mode 666)" }] });
      expect(token.revoked).toEqual([]);
      expect((await lstat(path)).isFile()).toBe(true);
      expect(warnings).toEqual([expect.stringMatching(/^SBX_CREDENTIAL_RECORD: .*can be written by others \(mode 666\); it was not trusted/)]);
    });

    it("a record owned by another user", async () => {
      const { result, token } = await plantAndRevoke("trust-foreign-record", async (path, text) => {
        await writeFile(path, text, { mode: 0o600 });
        await chown(path, OTHER_UID, OTHER_UID);
      });
      expect(result.refused.map((entry) => entry.reason)).toEqual([`is owned by uid ${OTHER_UID}, not 0`]);
      expect(result.revoked).toEqual([]);
      expect(token.revoked).toEqual([]);
    });

    it("a record that is a symbolic link to another user's file", async () => {
      const target = join(elsewhere, "their-record.json");
      const { result, token, path } = await plantAndRevoke("trust-symlink-record", async (path, text) => {
        await writeFile(target, text, { mode: 0o644 });
        await chown(target, OTHER_UID, OTHER_UID);
        await symlink(target, path);
      });
      expect(result.refused.map((entry) => entry.reason)).toEqual(["is a symbolic link"]);
      expect(token.revoked).toEqual([]);
      expect((await lstat(path)).isSymbolicLink()).toBe(true);
    });

    it("while a record the caller owns, 0600, is revoked as before (with its handle)", async () => {
      const { result, token } = await plantAndRevoke("trust-own-record", (path, text) => writeFile(path, text, { mode: 0o600 }));
      expect(result.refused).toEqual([]);
      expect(token.revoked.map((request) => request.handle)).toEqual(["planted-handle"]);
    });
  });
});
