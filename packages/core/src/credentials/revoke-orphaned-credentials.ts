import { hostname } from "node:os";
import { InvalidArgumentError } from "../errors/index.js";
import { isCredentialSource, type CredentialSource } from "../v1/credentials.js";
import { ensureTrustedStore } from "./credential-store-trust.js";
import {
  abandonedRecordFileName,
  claimRecord,
  credentialsFolder,
  defaultStateDirectory,
  listRecords,
  ownerIsAlive,
  processIsAlive,
  readRecord,
  removeRecord,
  writeRecord,
} from "./credential-store.js";
import { throwIfAborted } from "../security/guard.js";
import { revokeWithRetries } from "./revoke-with-retries.js";

/** Options of `revokeOrphanedCredentials()`. */
export interface RevokeOrphanedCredentialsOptions {
  /** The credential sources whose records to process (matched by `id`). Records of other sources are left alone. */
  sources: readonly CredentialSource[];
  /** The state folder. Default: `SBX_STATE_DIR`, else `$XDG_STATE_HOME/sbx`, else `~/.local/state/sbx`. */
  stateDirectory?: string;
  /** Stops between records (an attempt in progress ends at its `timeoutMs`). */
  signal?: AbortSignal;
}

/** One credential `revokeOrphanedCredentials()` dealt with. */
export interface OrphanedCredential {
  /** The secret name. */
  readonly name: string;
  /** The source id. */
  readonly sourceId: string;
  /** The sandbox it was issued for. */
  readonly sandboxId: string;
  /** The owning process that died (or that gave up revoking). */
  readonly ownerPid: number;
  /** Revoke attempts made now. */
  readonly attempts: number;
  /** Why it still failed, or null when revoked. */
  readonly error: string | null;
}

/** A record file found and not trusted: left where it is, never parsed, its handle never passed to `revoke`. */
export interface RefusedCredentialRecord {
  /** The file name in the credential store. */
  readonly fileName: string;
  /** Why: `"is a symbolic link"`, `"is owned by uid 12345, not 1000"`, `"can be written by others (mode 666)"`. */
  readonly reason: string;
}

/** What `revokeOrphanedCredentials()` did. */
export interface RevokeOrphanedCredentialsResult {
  /** Revoked now; their records are gone. */
  readonly revoked: readonly OrphanedCredential[];
  /** Still unrevoked after the bounded retries; their records are kept for the next run. */
  readonly failed: readonly OrphanedCredential[];
  /** Records of these sources left alone: owner still alive, claimed by a live process, another host's, or unreadable. */
  readonly skipped: number;
  /**
   * Record files of these sources that were not trusted (a symbolic link, another user's file, writable by others):
   * left alone and reported, also as a process warning (`SBX_CREDENTIAL_RECORD`). Anyone who can plant a file there
   * could otherwise choose the handle sbx passes to `revoke`.
   */
  readonly refused: readonly RefusedCredentialRecord[];
}

/**
 * Revokes the credentials of sandboxes whose owning host process died (SIGKILL, a crash, a power cut), and retries
 * those whose revocation failed earlier. Reads the durable records in the state folder; a record is processed when
 * its owner pid is no longer alive on this machine, or when revocation already failed. Each is claimed first (an
 * atomic rename), so two processes never revoke the same record at once. Called automatically, for the sources
 * given, by `createSandbox()` before it issues new credentials; call it at start-up to clean up sooner.
 * @example const { revoked, failed } = await revokeOrphanedCredentials({ sources: [githubToken] });
 */
export async function revokeOrphanedCredentials(options: RevokeOrphanedCredentialsOptions): Promise<RevokeOrphanedCredentialsResult> {
  if (typeof options !== "object" || options === null || !Array.isArray(options.sources) || !options.sources.every(isCredentialSource)) {
    throw new InvalidArgumentError({ field: "options.sources", message: "Invalid options.sources: expected an array of credential() sources." });
  }
  const folder = credentialsFolder(options.stateDirectory ?? defaultStateDirectory());
  const sources = new Map(options.sources.map((source) => [source.id, source]));
  const here = hostname();
  const revoked: OrphanedCredential[] = [];
  const failed: OrphanedCredential[] = [];
  const refused: RefusedCredentialRecord[] = [];
  let skipped = 0;
  // A store that is a link, another user's or writable by others throws CredentialStoreUnsafeError: none of it is trusted.
  if (!(await ensureTrustedStore(folder, { create: false }))) return { revoked, failed, skipped, refused };
  const liveness = new Map<string, boolean>();
  const ownerAlive = (ownerPid: number, ownerStartTime: string | null) => {
    const key = `${ownerPid}-${ownerStartTime}`;
    if (!liveness.has(key)) liveness.set(key, ownerIsAlive({ ownerPid, ownerStartTime }));
    return liveness.get(key)!;
  };
  for (const stored of await listRecords(folder, [...sources.keys()])) {
    throwIfAborted(options.signal);
    // Decided from the name: a claim belongs to the claiming process while it lives; an owner's record to its owner; an abandoned one (owner 0) to anyone.
    const abandoned =
      stored.claimedBy !== null ? !processIsAlive(stored.claimedBy) : stored.ownerPid === 0 || !ownerAlive(stored.ownerPid, stored.ownerStartTime);
    if (!abandoned) {
      skipped++;
      continue;
    }
    const read = await readRecord(folder, stored.fileName);
    if (read.kind === "untrusted") {
      refused.push({ fileName: stored.fileName, reason: read.reason });
      process.emitWarning(
        `sbx: the credential record ${stored.fileName} in ${folder} ${read.reason}; it was not trusted (its handle was not revoked) and was left where it is. Remove it once you know who put it there.`,
        { code: "SBX_CREDENTIAL_RECORD" },
      );
      continue;
    }
    const record = read.kind === "record" ? read.record : null;
    const source = record ? sources.get(record.sourceId) : undefined;
    // A pid says nothing about another machine's processes: only abandoned records of other hosts are taken.
    if (!record || !source || (record.ownerHost !== here && stored.ownerPid !== 0)) {
      skipped++;
      continue;
    }
    const claimed = await claimRecord(folder, stored);
    if (!claimed) {
      skipped++;
      continue;
    }
    const outcome = await revokeWithRetries(
      {
        source,
        name: record.name,
        sandboxId: record.sandboxId,
        value: record.value,
        handle: record.handle,
        reason: "orphaned",
        secretValues: record.value ? [record.value] : [],
      },
      options.signal,
    );
    const entry: OrphanedCredential = {
      name: record.name,
      sourceId: record.sourceId,
      sandboxId: record.sandboxId,
      ownerPid: record.ownerPid,
      attempts: outcome.attempts,
      error: outcome.error,
    };
    if (outcome.revoked) {
      await removeRecord(folder, claimed);
      revoked.push(entry);
    } else {
      const kept = { ...record, state: "revoke-failed" as const, revokeAttempts: record.revokeAttempts + outcome.attempts, lastError: outcome.error };
      await writeRecord(folder, kept, abandonedRecordFileName(kept));
      await removeRecord(folder, claimed);
      failed.push(entry);
    }
  }
  return { revoked, failed, skipped, refused };
}
