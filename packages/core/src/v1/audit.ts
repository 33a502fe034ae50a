import { z } from "zod";
import { credentialAuditEntrySchema, type CredentialAuditEntry } from "./credentials.js";
import type { MatchesSchema, SchemaMatches } from "./schema-match.js";

/** How one policy was handled: what the caller asked for, what the backend applied, and how it is enforced. */
export interface PolicyRecord<Value = unknown> {
  /** What the caller asked for (after defaults). */
  readonly requested: Value;
  /** What the backend actually applied, read back from the backend where it can be. */
  readonly applied: Value;
  /** How the applied policy is enforced, in words, for example `"Docker NetworkMode none: only loopback inside"`. */
  readonly enforcement: string;
}

/**
 * What a sandbox is and how each policy is enforced. JSON-serialisable; secret values never appear here
 * (only secret names).
 */
export interface AuditRecord {
  /** Format version of this record. */
  readonly specificationVersion: "sbx-audit-v1";
  /** Backend name, for example `"docker"`. */
  readonly backend: string;
  /** Version of the backend itself (engine, service or engine library), as reported by it. */
  readonly backendVersion: string;
  /** The sandbox id. */
  readonly sandboxId: string;
  /** The target the sandbox was created from, for example `"python:3.12-slim"`. */
  readonly target: string;
  /** ISO time the sandbox was created. */
  readonly createdAt: string;
  /** ISO time it was killed or disposed, or null while alive. */
  readonly closedAt: string | null;
  /** Whether the backend is an isolation boundary. The fake is not. */
  readonly isolating: boolean;
  /** Per-policy records. */
  readonly policies: {
    readonly network: PolicyRecord;
    readonly limits: PolicyRecord;
    readonly mounts: PolicyRecord;
    readonly user: PolicyRecord;
    readonly lifetime: PolicyRecord;
  } & Readonly<Record<string, PolicyRecord>>;
  /** Names of environment variables and secrets passed in; secret values are never recorded. */
  readonly environment: { readonly variables: readonly string[]; readonly secrets: readonly string[] };
  /** Anything else worth knowing, for example engine warnings. */
  readonly notes: readonly string[];
  /** Scoped credentials (see `credential()`): name, source, issue and revoke times, outcome. Never values. Absent in records from before credentials existed. */
  readonly credentials?: readonly CredentialAuditEntry[];
}

const policyRecordSchema = z.object({ requested: z.unknown(), applied: z.unknown(), enforcement: z.string().min(1) });

/** zod schema of `AuditRecord`: what the contract suite checks every backend's audit record against. */
export const auditRecordSchema = z.object({
  specificationVersion: z.literal("sbx-audit-v1"),
  backend: z.string().min(1),
  backendVersion: z.string().min(1),
  sandboxId: z.string().min(1),
  target: z.string(),
  createdAt: z.iso.datetime(),
  closedAt: z.iso.datetime().nullable(),
  isolating: z.boolean(),
  policies: z
    .object({
      network: policyRecordSchema,
      limits: policyRecordSchema,
      mounts: policyRecordSchema,
      user: policyRecordSchema,
      lifetime: policyRecordSchema,
    })
    .catchall(policyRecordSchema),
  environment: z.object({ variables: z.array(z.string()), secrets: z.array(z.string()) }),
  notes: z.array(z.string()),
  credentials: z.array(credentialAuditEntrySchema).optional(),
});

/** The documented `AuditRecord` and its schema name the same fields, and every record the schema accepts is one. */
// eslint-disable-next-line @typescript-eslint/no-unused-vars -- a compile-time check: the alias fails to type-check when schema and type drift
type AuditRecordMatch = MatchesSchema<SchemaMatches<typeof auditRecordSchema, AuditRecord>>;
