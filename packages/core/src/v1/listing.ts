import { z } from "zod";
import type { MatchesSchema, SchemaMatches } from "./schema-match.js";

/** The states a listed sandbox can be in. `"starting"`: created, not yet running; `"stopped"`: ended, not yet removed. */
export const listedSandboxStateSchema = z.enum(["starting", "running", "paused", "stopped"]);

/** One sandbox as `listSandboxes()` reports it (ADR 0050). */
export interface ListedSandbox {
  /** The sandbox id (what `connectSandbox` takes where `RECONNECT` is on). */
  readonly id: string;
  /** The labels given at create (`metadata`). */
  readonly labels: Readonly<Record<string, string>>;
  /** ISO time the backend created it. */
  readonly createdAt: string;
  /** Its state as the backend reports it. */
  readonly state: z.infer<typeof listedSandboxStateSchema>;
  /** The name given to `getOrCreateSandbox`, or null. */
  readonly name: string | null;
}

/** zod schema of `ListedSandbox`: what core checks every backend's answer against. */
export const listedSandboxSchema = z.object({
  id: z.string().min(1),
  labels: z.record(z.string(), z.string()).readonly(),
  createdAt: z.iso.datetime(),
  state: listedSandboxStateSchema,
  name: z.string().nullable(),
});

/** `ListedSandbox` and its schema name the same fields. */
// eslint-disable-next-line @typescript-eslint/no-unused-vars -- a compile-time check: the alias fails to type-check when schema and type drift
type ListedSandboxMatch = MatchesSchema<SchemaMatches<typeof listedSandboxSchema, ListedSandbox>>;

/** A sandbox name: what `getOrCreateSandbox` accepts (a Docker container name's grammar, 1 to 63 characters). */
export const sandboxNameSchema = z
  .string()
  .regex(/^[A-Za-z0-9][A-Za-z0-9_.-]{0,62}$/, "must be 1 to 63 letters, digits, '_', '.' or '-', starting with a letter or digit");
