import { SbxError, type SbxErrorOptions } from "./sbx-error.js";

/**
 * A scoped credential could not be issued when the sandbox was created (the source's `issue` failed, timed out,
 * returned something that is not a credential, or its durable record could not be written). The sandbox was
 * destroyed and every credential already issued for it was revoked; nothing is left running.
 */
export class CredentialIssueError extends SbxError {
  /** The secret name the credential was for, for example `"GITHUB_TOKEN"`. */
  readonly secretName: string;
  /** The credential source's `id`. */
  readonly sourceId: string;
  constructor(options: SbxErrorOptions & { secretName: string; sourceId: string }) {
    super("SBX_CREDENTIAL_ISSUE", { retryable: true, ...options });
    this.name = "CredentialIssueError";
    this.secretName = options.secretName;
    this.sourceId = options.sourceId;
  }
}

/** One credential whose revocation failed after every attempt. */
export interface FailedRevocation {
  /** The secret name, for example `"GITHUB_TOKEN"`. */
  readonly secretName: string;
  /** The credential source's `id`. */
  readonly sourceId: string;
  /** How many times `revoke` was tried. */
  readonly attempts: number;
  /** Why the last attempt failed (secret values redacted). */
  readonly message: string;
}

/**
 * Revoking one or more scoped credentials failed after the bounded retries. The sandbox itself is gone; the
 * credentials may still be valid. Their durable records were kept, so `revokeOrphanedCredentials()` (or the next
 * `createSandbox()` with the same source) tries again. Not retryable through the same call: `kill()` keeps this result.
 */
export class CredentialRevocationError extends SbxError {
  /** The sandbox whose credentials were not revoked. */
  readonly sandboxId: string;
  /** Each credential that is still unrevoked. */
  readonly failures: readonly FailedRevocation[];
  constructor(options: Omit<SbxErrorOptions, "message"> & { sandboxId: string; failures: readonly FailedRevocation[]; message?: string }) {
    const names = options.failures
      .map((failure) => `${failure.secretName} (source ${failure.sourceId}, ${failure.attempts} attempts: ${failure.message})`)
      .join("; ");
    super("SBX_CREDENTIAL_REVOCATION", {
      ...options,
      message:
        options.message ??
        `Sandbox ${options.sandboxId} ended, but revoking its credentials failed: ${names}. They may still be valid; their records were kept, so revokeOrphanedCredentials({ sources }) retries them later.`,
    });
    this.name = "CredentialRevocationError";
    this.sandboxId = options.sandboxId;
    this.failures = options.failures.map((failure) => Object.freeze({ ...failure }));
  }
}

/**
 * The credential store (`$SBX_STATE_DIR/credentials`) is not one only the caller controls: the folder is a symbolic
 * link, is owned by another user, or can be written by others (or its parent can, so the folder could be swapped).
 * Nothing is written there and no record found there is acted on: a planted record could make sbx revoke (or leak to
 * a `revoke` call) a handle someone else chose. Not retryable until the folder is fixed.
 */
export class CredentialStoreUnsafeError extends SbxError {
  /** The folder that was refused. */
  readonly path: string;
  /** Why, for example `"is a symbolic link"` or `"is owned by uid 12345, not 0"`. */
  readonly reason: string;
  constructor(options: Omit<SbxErrorOptions, "message"> & { path: string; reason: string; message?: string }) {
    super("SBX_CREDENTIAL_STORE_UNSAFE", {
      ...options,
      message:
        options.message ??
        `The credential store ${options.path} ${options.reason}; sbx neither writes credential records there nor trusts any it finds. Remove it (or point SBX_STATE_DIR at a folder only you own) and sbx creates it again, mode 0700.`,
    });
    this.name = "CredentialStoreUnsafeError";
    this.path = options.path;
    this.reason = options.reason;
  }
}
