import { createHash, randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { constants } from "node:fs";
import { chmod, open, readdir, rename, rm } from "node:fs/promises";
import { homedir, hostname, tmpdir } from "node:os";
import { join } from "node:path";
import { z } from "zod";
import { ensureTrustedStore, readTrustedRecordFile } from "./credential-store-trust.js";

/**
 * The durable record of one live credential: what a later process needs to revoke it if this one dies. One file per
 * credential, mode 0600, in a 0700 folder; written atomically (temporary file, fsync, rename) and removed after a
 * successful revoke. The value is stored only when the source sets `persistValue`.
 */
export const credentialRecordSchema = z.object({
  version: z.literal(1),
  sourceId: z.string().min(1),
  name: z.string().min(1),
  sandboxId: z.string().min(1),
  backend: z.string(),
  ownerPid: z.number().int().positive(),
  ownerHost: z.string(),
  /** The owner's start time (Linux `/proc/<pid>/stat` field 22), so a reused pid is not taken for the owner; null where unknown. */
  ownerStartTime: z.string().nullable().default(null),
  /** `issuing`: `issue` was called and may have issued; `live`: issued; `revoke-failed`: every attempt failed. */
  state: z.enum(["issuing", "live", "revoke-failed"]),
  recordedAt: z.iso.datetime(),
  issuedAt: z.iso.datetime().nullable(),
  expiresAt: z.iso.datetime().nullable(),
  handle: z.string().nullable(),
  value: z.string().nullable(),
  revokeAttempts: z.number().int().min(0),
  lastError: z.string().nullable(),
});
/** The durable record of one live credential. */
export type CredentialRecord = z.output<typeof credentialRecordSchema>;

/**
 * `<source key>.<owner>.<record key>.json`, plus `.claimed-<pid>` while a process revokes it. The owner is
 * `<pid>-<start time>` (`0-x` once the owner gave up after failed attempts), so a scan finds the records of given sources
 * whose owner is gone from names alone, and reads only those.
 */
const RECORD_FILE = /^([0-9a-f]{16})\.(\d+)-(\d+|x)\.([0-9a-f]{40})\.json(?:\.claimed-(\d+))?$/;

/** The owner part of a record name for a record no process owns any more (revocation failed; anyone may retry). */
const ABANDONED_OWNER = { ownerPid: 0, ownerStartTime: null };

/** The state folder: `SBX_STATE_DIR`, else `$XDG_STATE_HOME/sbx`, else `~/.local/state/sbx` (a per-user temp folder without a home). */
export function defaultStateDirectory(environment: NodeJS.ProcessEnv = process.env): string {
  if (environment.SBX_STATE_DIR) return environment.SBX_STATE_DIR;
  if (environment.XDG_STATE_HOME) return join(environment.XDG_STATE_HOME, "sbx");
  const home = homedir();
  if (home) return join(home, ".local", "state", "sbx");
  return join(tmpdir(), `sbx-state-${process.getuid?.() ?? "user"}`);
}

/** The folder holding credential records inside a state folder. */
export function credentialsFolder(stateDirectory: string): string {
  return join(stateDirectory, "credentials");
}

/** The key of a source id in record names. */
export function sourceKey(sourceId: string): string {
  return createHash("sha256").update(sourceId).digest("hex").slice(0, 16);
}

/** The record file of one credential: source key, owner (pid and start time), and a hash of sandbox id and name. */
export function recordFileName(record: {
  sourceId: string;
  sandboxId: string;
  name: string;
  ownerPid: number;
  ownerStartTime: string | null;
}): string {
  const recordKey = createHash("sha256").update(`${record.sandboxId}\0${record.name}`).digest("hex").slice(0, 40);
  return `${sourceKey(record.sourceId)}.${record.ownerPid}-${record.ownerStartTime ?? "x"}.${recordKey}.json`;
}

/** The file name of a record once its owner gave up on it (revocation failed): any later process may retry it. */
export function abandonedRecordFileName(record: CredentialRecord): string {
  return recordFileName({ ...record, ...ABANDONED_OWNER });
}

/** A process's start time in clock ticks since boot, from Linux `/proc/<pid>/stat`; null where unavailable. */
export function processStartTime(pid: number): string | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // Fields after the parenthesised command name start at field 3; the start time is field 22.
    return stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19] ?? null;
  } catch {
    return null;
  }
}

/** This process's identity as a record owner. */
export function currentOwner(): { ownerPid: number; ownerHost: string; ownerStartTime: string | null } {
  return { ownerPid: process.pid, ownerHost: hostname(), ownerStartTime: processStartTime(process.pid) };
}

/** True when the record's owner still runs: its pid is alive and, where known, started at the recorded time (not a reused pid). */
export function ownerIsAlive(record: { ownerPid: number; ownerStartTime: string | null }): boolean {
  if (!processIsAlive(record.ownerPid)) return false;
  if (record.ownerStartTime === null) return true;
  const startTime = processStartTime(record.ownerPid);
  return startTime === null || startTime === record.ownerStartTime;
}

/** True when `pid` is a live process on this machine (EPERM means it exists but belongs to someone else). */
export function processIsAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

/**
 * Creates the folder (0700, the caller's; refused with `CredentialStoreUnsafeError` when it is a link, another user's
 * or writable by others) and writes `record` atomically with mode 0600, under `fileName` (default: its owner's name).
 */
export async function writeRecord(folder: string, record: CredentialRecord, fileName = recordFileName(record)): Promise<void> {
  await ensureTrustedStore(folder, { create: true });
  const temporary = join(folder, `.${fileName}.${randomBytes(6).toString("hex")}.tmp`);
  const handle = await open(temporary, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o600);
  try {
    await handle.writeFile(JSON.stringify(record));
    await handle.sync();
  } finally {
    await handle.close();
  }
  try {
    await chmod(temporary, 0o600);
    await rename(temporary, join(folder, fileName));
  } catch (error) {
    await rm(temporary, { force: true });
    throw error;
  }
}

/** Removes a record; missing is fine. */
export async function removeRecord(folder: string, fileName: string): Promise<void> {
  await rm(join(folder, fileName), { force: true });
}

/** One record file found in the folder, described by its name (nothing read yet). */
export interface StoredRecord {
  /** The file name as found. */
  readonly fileName: string;
  /** The canonical name, without a claim suffix. */
  readonly baseName: string;
  /** The owner pid in the name (0: abandoned after failed revocation). */
  readonly ownerPid: number;
  /** The owner's start time in the name, or null. */
  readonly ownerStartTime: string | null;
  /** The pid that claimed it, when claimed. */
  readonly claimedBy: number | null;
}

/** Lists the records in `folder` belonging to `sourceIds` (none when the folder does not exist), from names only. */
export async function listRecords(folder: string, sourceIds: readonly string[]): Promise<StoredRecord[]> {
  let names: string[];
  try {
    names = await readdir(folder);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return [];
    throw error;
  }
  const keys = new Set(sourceIds.map(sourceKey));
  const records: StoredRecord[] = [];
  for (const fileName of names) {
    const match = RECORD_FILE.exec(fileName);
    if (!match || !keys.has(match[1]!)) continue;
    records.push({
      fileName,
      baseName: fileName.replace(/\.claimed-\d+$/, ""),
      ownerPid: Number(match[2]),
      ownerStartTime: match[3] === "x" ? null : match[3]!,
      claimedBy: match[5] ? Number(match[5]) : null,
    });
  }
  return records;
}

/** What reading one record found: the record, a file not trusted (and why), or nothing usable (gone or unparsable). */
export type RecordRead =
  | { readonly kind: "record"; readonly record: CredentialRecord }
  | { readonly kind: "untrusted"; readonly reason: string }
  | { readonly kind: "unusable" };

/**
 * Reads and validates one record without following links. A record that is a symbolic link, another user's file, or
 * writable by others is `untrusted` and never parsed; gone or unparsable is `unusable`.
 */
export async function readRecord(folder: string, fileName: string): Promise<RecordRead> {
  try {
    const read = await readTrustedRecordFile(folder, fileName);
    if (read.kind === "untrusted") return read;
    if (read.kind === "gone") return { kind: "unusable" };
    const parsed = credentialRecordSchema.safeParse(JSON.parse(read.text));
    return parsed.success ? { kind: "record", record: parsed.data } : { kind: "unusable" };
  } catch {
    return { kind: "unusable" };
  }
}

/** Claims a record for this process by renaming it; null when another process got it first. */
export async function claimRecord(folder: string, stored: StoredRecord): Promise<string | null> {
  const claimed = `${stored.baseName}.claimed-${process.pid}`;
  try {
    await rename(join(folder, stored.fileName), join(folder, claimed));
    return claimed;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return null;
    throw error;
  }
}
