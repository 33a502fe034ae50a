import { z } from "zod";

/** Marks objects made by `credential()`, recognised across duplicate installs of `@sbx/core`. */
export const CREDENTIAL_SOURCE_MARKER = Symbol.for("sbx.credential-source");

/** Why a sandbox's credentials were revoked. */
export const credentialEndReasonSchema = z.enum(["kill", "lifetime", "lost", "create-failed", "orphaned"]);
/** Why a sandbox's credentials were revoked: `kill()` or disposal, lifetime expiry, the sandbox lost, creation failing, or a dead host process (recovered later). */
export type CredentialEndReason = z.output<typeof credentialEndReasonSchema>;

/** What `issue` receives. */
export interface CredentialIssueRequest {
  /** The id of the sandbox the credential is for (the sandbox exists already). */
  readonly sandboxId: string;
  /** The secret name the value will be exposed as, for example `"GITHUB_TOKEN"`. */
  readonly name: string;
  /** Aborted when creation is aborted or `timeoutMs` passes. */
  readonly signal: AbortSignal;
}

/** What `revoke` receives. */
export interface CredentialRevokeRequest {
  /** The sandbox the credential was issued for. */
  readonly sandboxId: string;
  /** The secret name. */
  readonly name: string;
  /**
   * The issued value. `null` only when a later process revokes a crashed host's credential and the source did not
   * set `persistValue` (the value was never written to disk): revoke by `handle` or `sandboxId` then.
   */
  readonly value: string | null;
  /** The non-secret handle `issue` returned, or null. */
  readonly handle: string | null;
  /** Why the sandbox ended. */
  readonly reason: CredentialEndReason;
  /** Aborted after `timeoutMs`. */
  readonly signal: AbortSignal;
}

/** What `issue` returns: the value, or the value with an expiry and a non-secret handle. */
export const issuedCredentialSchema = z.union([
  z.string().min(1),
  z
    .object({
      /** The secret value exposed to the sandbox as an environment variable. */
      value: z.string().min(1),
      /** When the credential expires by itself, if it does. Recorded in the audit record. */
      expiresAt: z.date().optional(),
      /**
       * A non-secret reference to the credential (a token id, a Vault accessor) that `revoke` can use. Written to
       * the durable record, so it must not grant access by itself.
       */
      handle: z.string().min(1).max(1024).optional(),
    })
    .strict(),
]);
/** What `issue` returns. */
export type IssuedCredential = z.input<typeof issuedCredentialSchema>;

const functionSchema = <Type>() => z.custom<Type>((value) => typeof value === "function", "must be a function");

/** An event in a credential's life, for logging and alerting. Never carries the value. */
export interface CredentialEvent {
  /** `issued`; `revoked`; `revoke-attempt-failed` (another attempt follows); `revoke-failed` (every attempt failed, the record is kept). */
  readonly type: "issued" | "revoked" | "revoke-attempt-failed" | "revoke-failed";
  /** The source's id. */
  readonly sourceId: string;
  /** The secret name. */
  readonly name: string;
  /** The sandbox id. */
  readonly sandboxId: string;
  /** Why the sandbox ended (revocation events only). */
  readonly reason: CredentialEndReason | null;
  /** The attempt number (revocation events only), from 1. */
  readonly attempt: number | null;
  /** The failure (failed attempts only); secret values are redacted from it. */
  readonly error: Error | null;
}

/** The options of `credential()`. Validated with zod; see `CredentialSourceInput`. */
export const credentialSourceSchema = z
  .object({
    /**
     * Stable name of this source, for example `"github-branch-token"`. Durable records name it, so a later process
     * given the same source (same id) can revoke a crashed host's credentials.
     */
    id: z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/, "must be 1-128 letters, digits, '.', '_' or '-'"),
    /** Issues a credential for one sandbox, after the sandbox is created. Returns the value, or `{ value, expiresAt?, handle? }`. */
    issue: functionSchema<(request: CredentialIssueRequest) => Promise<IssuedCredential> | IssuedCredential>(),
    /** Revokes it. Called once when the sandbox ends; must be idempotent, because a crash between a revoke and its bookkeeping repeats it. */
    revoke: functionSchema<(request: CredentialRevokeRequest) => Promise<void> | void>(),
    /**
     * Also write the value into the durable record (mode 0600), so a later process can pass it to `revoke` after a
     * crash. Default false: only the handle and the sandbox id are stored. Set it only when revoking needs the value.
     */
    persistValue: z.boolean().default(false),
    /**
     * Time limit of each `issue` call and each `revoke` attempt, in milliseconds. Default 5000, so the default three
     * attempts (with backoff) end within `kill()`'s own bound.
     */
    timeoutMs: z.number().int().min(1).max(600_000).default(5_000),
    /** Revoke attempts before the failure is reported and the record kept for a later retry. Default 3. */
    revokeAttempts: z.number().int().min(1).max(10).default(3),
    /** Delay before the second attempt, doubled for each further one. Default 250 ms. */
    retryDelayMs: z.number().int().min(0).max(60_000).default(250),
    /** Called for each credential event. Without it, a final revocation failure is also emitted as a process warning. */
    onEvent: functionSchema<(event: CredentialEvent) => void>().optional(),
  })
  .strict();

/** What `credential()` accepts. */
export type CredentialSourceInput = z.input<typeof credentialSourceSchema>;

/** A credential source: pass it as a value of `createSandbox(..., { secrets })`. Made by `credential()`. */
export type CredentialSource = Readonly<z.output<typeof credentialSourceSchema>> & { readonly [CREDENTIAL_SOURCE_MARKER]: true };

/** One credential in the audit record. Never holds the value. */
export const credentialAuditEntrySchema = z.object({
  /** The secret name. */
  name: z.string().min(1),
  /** The source's id. */
  source: z.string().min(1),
  /** When it was issued. */
  issuedAt: z.iso.datetime(),
  /** When it expires by itself, if the source said. */
  expiresAt: z.iso.datetime().nullable(),
  /** When it was revoked, or null. */
  revokedAt: z.iso.datetime().nullable(),
  /** Why the sandbox ended, once it has. */
  endReason: credentialEndReasonSchema.nullable(),
  /** `active` until revocation is tried; then `revoking`, and `revoked` or `revoke-failed`. */
  outcome: z.enum(["active", "revoking", "revoked", "revoke-failed"]),
  /** Revoke attempts made. */
  revokeAttempts: z.number().int().min(0),
  /** Why the last attempt failed, secret values redacted, or null. */
  error: z.string().nullable(),
});
/** One credential in the audit record. */
export type CredentialAuditEntry = z.output<typeof credentialAuditEntrySchema>;

/** True for a value made by `credential()` (from any copy of `@sbx/core`). */
export function isCredentialSource(value: unknown): value is CredentialSource {
  return typeof value === "object" && value !== null && (value as Record<symbol, unknown>)[CREDENTIAL_SOURCE_MARKER] === true;
}
