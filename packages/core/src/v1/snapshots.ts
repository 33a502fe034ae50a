import { z } from "zod";
import type { MatchesSchema, SchemaMatches } from "./schema-match.js";

/**
 * A snapshot id as core accepts it: 1 to 256 printable ASCII characters, no whitespace. Each backend names its own
 * (Docker: `sbx-snapshot:<32 hex>`, the fake: `fake-snapshot-<uuid>`) and refuses one it did not make.
 */
export const snapshotIdSchema = z
  .string()
  .min(1)
  .max(256)
  .regex(/^[\x21-\x7e]+$/, "must be printable ASCII without spaces");

/**
 * One filesystem snapshot of a sandbox (ADR 0056): what `sandbox.snapshot()` answers and `listSnapshots()` lists.
 * A snapshot holds files, never processes or memory, and nothing of the sandbox's secrets, credentials or policies.
 */
export interface SandboxSnapshot {
  /** The id `createSandbox(target, { fromSnapshot })` and `deleteSnapshot(target, id)` take. */
  readonly id: string;
  /** ISO time the backend made it. */
  readonly createdAt: string;
  /** The backend that holds it, for example `"docker"`. */
  readonly backend: string;
  /** Bytes of storage it holds of its own, where the backend can tell (Docker: the image layer with the workspace). */
  readonly sizeBytes?: number;
}

/** zod schema of `SandboxSnapshot`: what core checks every backend's answer against. */
export const sandboxSnapshotSchema = z
  .object({
    id: snapshotIdSchema,
    createdAt: z.iso.datetime({ offset: true }),
    backend: z.string().min(1),
    sizeBytes: z.number().int().nonnegative().optional(),
  })
  .strict();

/** `SandboxSnapshot` and its schema name the same fields. */
// eslint-disable-next-line @typescript-eslint/no-unused-vars -- a compile-time check: the alias fails to type-check when schema and type drift
type SandboxSnapshotMatch = MatchesSchema<SchemaMatches<typeof sandboxSnapshotSchema, SandboxSnapshot>>;
