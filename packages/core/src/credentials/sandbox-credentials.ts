import { AbortedError, CredentialIssueError, CredentialRevocationError, SbxError, type FailedRevocation } from "../errors/index.js";
import { issuedCredentialSchema, type CredentialAuditEntry, type CredentialEndReason, type CredentialSource } from "../v1/credentials.js";
import {
  abandonedRecordFileName,
  credentialsFolder,
  currentOwner,
  recordFileName,
  removeRecord,
  writeRecord,
  type CredentialRecord,
} from "./credential-store.js";
import { redactError, redactText } from "../security/guard.js";
import { emitCredentialEvent, revokeWithRetries, withDeadline } from "./revoke-with-retries.js";

/** One credential of one sandbox, as core tracks it. */
interface TrackedCredential {
  readonly name: string;
  readonly source: CredentialSource;
  value: string | null;
  handle: string | null;
  issuedAt: string | null;
  expiresAt: string | null;
  revokedAt: string | null;
  endReason: CredentialEndReason | null;
  outcome: CredentialAuditEntry["outcome"];
  revokeAttempts: number;
  error: string | null;
  record: CredentialRecord | null;
}

/**
 * The scoped credentials of one sandbox: issues them after the sandbox exists, keeps a durable record of each while
 * it is live, and revokes every one exactly once when the sandbox ends (whichever way comes first).
 */
export class SandboxCredentials {
  private readonly credentials: TrackedCredential[];
  private readonly folder: string;
  private sandboxId = "";
  private revocation: Promise<FailedRevocation[]> | undefined;
  private lifetimeTimer: NodeJS.Timeout | undefined;

  constructor(
    private readonly options: {
      sources: ReadonlyMap<string, CredentialSource>;
      backend: string;
      stateDirectory: string;
      staticSecretValues: readonly string[];
    },
  ) {
    this.folder = credentialsFolder(options.stateDirectory);
    this.credentials = [...options.sources].map(([name, source]) => ({
      name,
      source,
      value: null,
      handle: null,
      issuedAt: null,
      expiresAt: null,
      revokedAt: null,
      endReason: null,
      outcome: "active",
      revokeAttempts: 0,
      error: null,
      record: null,
    }));
  }

  /** Every value to redact: the sandbox's static secrets and each issued value. */
  secretValues(): string[] {
    return [...this.options.staticSecretValues, ...this.credentials.flatMap((tracked) => (tracked.value ? [tracked.value] : []))];
  }

  /** Issues every credential for `sandboxId`, in order. Throws `CredentialIssueError` on the first failure (the caller cleans up). */
  async issueAll(sandboxId: string, signal: AbortSignal | undefined): Promise<Record<string, string>> {
    this.sandboxId = sandboxId;
    const values: Record<string, string> = {};
    for (const tracked of this.credentials) {
      values[tracked.name] = await this.issueOne(tracked, signal);
    }
    return values;
  }

  private async issueOne(tracked: TrackedCredential, signal: AbortSignal | undefined): Promise<string> {
    const { source, name } = tracked;
    const fail = (message: string, cause?: unknown): never => {
      throw redactError(
        new CredentialIssueError({ secretName: name, sourceId: source.id, backend: this.options.backend, cause, message }),
        this.secretValues(),
      );
    };
    const record: CredentialRecord = {
      version: 1,
      sourceId: source.id,
      name,
      sandboxId: this.sandboxId,
      backend: this.options.backend,
      ...currentOwner(),
      state: "issuing",
      recordedAt: new Date().toISOString(),
      issuedAt: null,
      expiresAt: null,
      handle: null,
      value: null,
      revokeAttempts: 0,
      lastError: null,
    };
    // The record exists before `issue` is called: a crash during the call still leaves something to revoke by sandbox id.
    try {
      await writeRecord(this.folder, record);
    } catch (error) {
      fail(
        `Could not write the durable record of credential ${name} in ${this.folder} (${error instanceof Error ? error.message : String(error)}); without it a crashed host could not revoke the credential, so none was issued. Set SBX_STATE_DIR to a writable folder.`,
        error,
      );
    }
    let issued: unknown;
    try {
      issued = await withDeadline(source.timeoutMs, signal, (issueSignal) => source.issue({ sandboxId: this.sandboxId, name, signal: issueSignal }));
    } catch (error) {
      // The service may have issued before failing or timing out: keep the record, so revoke (by sandbox id) still runs.
      tracked.record = record;
      if (signal?.aborted)
        throw new AbortedError({
          backend: this.options.backend,
          cause: signal.reason,
          message: `Creating the sandbox was aborted by the caller while credential ${name} was being issued; the sandbox was destroyed.`,
        });
      fail(
        `Issuing credential ${name} (source ${source.id}) for sandbox ${this.sandboxId} failed: ${error instanceof Error ? error.message : String(error)}. The sandbox was destroyed.`,
        error,
      );
    }
    const parsed = issuedCredentialSchema.safeParse(issued);
    if (!parsed.success) {
      // Something may have been issued: keep the record, so revocation (now, and after a crash) still covers it.
      tracked.issuedAt = new Date().toISOString();
      tracked.record = { ...record, state: "live", issuedAt: tracked.issuedAt };
      fail(
        `Credential source ${source.id} returned something that is not a credential for ${name}: expected a non-empty string or { value, expiresAt?, handle? }. The sandbox was destroyed.`,
      );
    }
    const result = typeof parsed.data === "string" ? { value: parsed.data } : parsed.data!;
    tracked.value = result.value;
    tracked.handle = result.handle ?? null;
    tracked.issuedAt = new Date().toISOString();
    tracked.expiresAt = result.expiresAt ? result.expiresAt.toISOString() : null;
    tracked.record = {
      ...record,
      state: "live",
      issuedAt: tracked.issuedAt,
      expiresAt: tracked.expiresAt,
      handle: tracked.handle,
      value: source.persistValue ? result.value : null,
    };
    try {
      await writeRecord(this.folder, tracked.record);
    } catch (error) {
      fail(
        `Could not update the durable record of credential ${name} in ${this.folder}: ${error instanceof Error ? error.message : String(error)}. The sandbox was destroyed.`,
        error,
      );
    }
    emitCredentialEvent(source, { type: "issued", sourceId: source.id, name, sandboxId: this.sandboxId, reason: null, attempt: null, error: null });
    return result.value;
  }

  /** Revokes every issued credential once, whatever ends the sandbox first; later calls share the outcome. Never rejects. */
  revokeAll(reason: CredentialEndReason): Promise<FailedRevocation[]> {
    if (!this.revocation) {
      if (this.lifetimeTimer) clearTimeout(this.lifetimeTimer);
      this.revocation = Promise.all(this.credentials.map((tracked) => this.revokeOne(tracked, reason))).then((failures) =>
        failures.flatMap((failure) => (failure ? [failure] : [])),
      );
    }
    return this.revocation;
  }

  private async revokeOne(tracked: TrackedCredential, reason: CredentialEndReason): Promise<FailedRevocation | null> {
    // Credentials whose issue never started (an earlier one failed, or the record could not be written) have nothing to revoke.
    if (tracked.record === null) return null;
    tracked.endReason = reason;
    tracked.outcome = "revoking";
    const outcome = await revokeWithRetries({
      source: tracked.source,
      name: tracked.name,
      sandboxId: this.sandboxId,
      value: tracked.value,
      handle: tracked.handle,
      reason,
      secretValues: this.secretValues(),
    });
    tracked.revokeAttempts = outcome.attempts;
    if (outcome.revoked) {
      tracked.outcome = "revoked";
      tracked.revokedAt = new Date().toISOString();
      if (tracked.record)
        await removeRecord(this.folder, recordFileName(tracked.record)).catch((error: unknown) => {
          process.emitWarning(
            `sbx: credential ${tracked.name} was revoked but its record could not be removed (${error instanceof Error ? error.message : String(error)}); a later revokeOrphanedCredentials() will revoke it again.`,
            { code: "SBX_CREDENTIAL_RECORD" },
          );
        });
      return null;
    }
    tracked.outcome = "revoke-failed";
    tracked.error = outcome.error;
    if (tracked.record) {
      // This process gives the record up: renamed to the abandoned owner, any later process with the source retries it.
      const failed: CredentialRecord = { ...tracked.record, state: "revoke-failed", revokeAttempts: outcome.attempts, lastError: outcome.error };
      const kept = await writeRecord(this.folder, failed, abandonedRecordFileName(failed)).then(
        () => true,
        () => false,
      );
      if (kept) await removeRecord(this.folder, recordFileName(tracked.record)).catch(() => {});
    }
    return { secretName: tracked.name, sourceId: tracked.source.id, attempts: outcome.attempts, message: outcome.error ?? "unknown failure" };
  }

  /** Revokes everything and throws `CredentialRevocationError` if anything stayed unrevoked. */
  async revokeAllOrThrow(reason: CredentialEndReason): Promise<void> {
    const failures = await this.revokeAll(reason);
    if (failures.length > 0) throw new CredentialRevocationError({ sandboxId: this.sandboxId, backend: this.options.backend, failures });
  }

  /** Revokes when the sandbox's lifetime ends (`deadline`, epoch ms). The timer does not keep the process alive. */
  watchLifetime(deadline: number): void {
    if (this.revocation) return;
    // A later call (the lifetime was changed with setLifetime) replaces the earlier end.
    clearTimeout(this.lifetimeTimer);
    this.lifetimeTimer = setTimeout(() => void this.revokeAll("lifetime"), Math.max(0, deadline - Date.now()));
    this.lifetimeTimer.unref();
  }

  /** Starts revocation when `error` says the sandbox is gone. */
  noticeError(error: unknown): void {
    if (SbxError.isInstance(error) && error.code === "SBX_SANDBOX_NOT_FOUND") void this.revokeAll("lost");
  }

  /** The audit entries: names, times and outcomes, never values. */
  auditEntries(): CredentialAuditEntry[] {
    return this.credentials
      .filter((tracked) => tracked.issuedAt !== null)
      .map((tracked) => ({
        name: tracked.name,
        source: tracked.source.id,
        issuedAt: tracked.issuedAt!,
        expiresAt: tracked.expiresAt,
        revokedAt: tracked.revokedAt,
        endReason: tracked.endReason,
        outcome: tracked.outcome,
        revokeAttempts: tracked.revokeAttempts,
        error: tracked.error === null ? null : redactText(tracked.error, this.secretValues()),
      }));
  }
}
