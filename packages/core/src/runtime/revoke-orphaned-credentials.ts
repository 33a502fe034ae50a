import { hostname } from "node:os";
import { InvalidArgumentError } from "../errors/index.js";
import { isCredentialSource, type CredentialSource } from "../v1/credentials.js";
import { claimRecord, credentialsFolder, defaultStateDirectory, listRecords, ownerIsAlive, processIsAlive, removeRecord, writeRecord } from "./credential-store.js";
import { throwIfAborted } from "./guard.js";
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

/** What `revokeOrphanedCredentials()` did. */
export interface RevokeOrphanedCredentialsResult {
  /** Revoked now; their records are gone. */
  readonly revoked: readonly OrphanedCredential[];
  /** Still unrevoked after the bounded retries; their records are kept for the next run. */
  readonly failed: readonly OrphanedCredential[];
  /** Records left alone: owner still alive, another host's, another source's, or unreadable. */
  readonly skipped: number;
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
  let skipped = 0;
  for (const stored of await listRecords(folder)) {
    throwIfAborted(options.signal);
    const record = stored.record;
    const source = record ? sources.get(record.sourceId) : undefined;
    if (!record || !source || record.ownerHost !== here) {
      skipped++;
      continue;
    }
    // A claimed record belongs to the claiming process while it lives; an unclaimed one to its owner, unless revocation already failed.
    const abandoned = stored.claimedBy !== null ? !processIsAlive(stored.claimedBy) : record.state === "revoke-failed" || !ownerIsAlive(record);
    if (!abandoned) {
      skipped++;
      continue;
    }
    const claimed = await claimRecord(folder, stored);
    if (!claimed) {
      skipped++;
      continue;
    }
    const outcome = await revokeWithRetries(
      { source, name: record.name, sandboxId: record.sandboxId, value: record.value, handle: record.handle, reason: "orphaned", secretValues: record.value ? [record.value] : [] },
      options.signal,
    );
    const entry: OrphanedCredential = { name: record.name, sourceId: record.sourceId, sandboxId: record.sandboxId, ownerPid: record.ownerPid, attempts: outcome.attempts, error: outcome.error };
    if (outcome.revoked) {
      await removeRecord(folder, claimed);
      revoked.push(entry);
    } else {
      await writeRecord(folder, { ...record, state: "revoke-failed", revokeAttempts: record.revokeAttempts + outcome.attempts, lastError: outcome.error }, stored.baseName);
      await removeRecord(folder, claimed);
      failed.push(entry);
    }
  }
  return { revoked, failed, skipped };
}
