import { createHash, randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { chmod, mkdir, open, readdir, readFile, rename, rm } from "node:fs/promises";
import { homedir, hostname, tmpdir } from "node:os";
import { join } from "node:path";
import { z } from "zod";

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

const RECORD_FILE = /^([0-9a-f]{40})\.json(?:\.claimed-(\d+))?$/;

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

/** The record file of one credential (a hash, so sandbox ids and names need no escaping). */
export function recordFileName(sandboxId: string, name: string): string {
  return `${createHash("sha256").update(`${sandboxId}\0${name}`).digest("hex").slice(0, 40)}.json`;
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

/** Creates the folder (0700) and writes `record` atomically with mode 0600. */
export async function writeRecord(folder: string, record: CredentialRecord, fileName = recordFileName(record.sandboxId, record.name)): Promise<void> {
  await mkdir(folder, { recursive: true, mode: 0o700 });
  const temporary = join(folder, `.${fileName}.${randomBytes(6).toString("hex")}.tmp`);
  const handle = await open(temporary, "wx", 0o600);
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

/** One record file found in the folder. */
export interface StoredRecord {
  /** The file name (`<hash>.json`, or `<hash>.json.claimed-<pid>` while a process works on it). */
  readonly fileName: string;
  /** The canonical file name (`<hash>.json`). */
  readonly baseName: string;
  /** The pid that claimed it, when claimed. */
  readonly claimedBy: number | null;
  /** The parsed record, or null when unreadable. */
  readonly record: CredentialRecord | null;
}

/** Lists the records in `folder` (none when it does not exist). */
export async function listRecords(folder: string): Promise<StoredRecord[]> {
  let names: string[];
  try {
    names = await readdir(folder);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return [];
    throw error;
  }
  const records: StoredRecord[] = [];
  for (const fileName of names) {
    const match = RECORD_FILE.exec(fileName);
    if (!match) continue;
    let record: CredentialRecord | null = null;
    try {
      const parsed = credentialRecordSchema.safeParse(JSON.parse(await readFile(join(folder, fileName), "utf8")));
      record = parsed.success ? parsed.data : null;
    } catch {
      record = null;
    }
    records.push({ fileName, baseName: `${match[1]}.json`, claimedBy: match[2] ? Number(match[2]) : null, record });
  }
  return records;
}

/** Claims a record for this process by renaming it; false when another process got it first. */
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
