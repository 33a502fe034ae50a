import { z } from "zod";
import type { CreateSandboxOptions } from "../v1/options.js";
import type { CredentialSource } from "../v1/credentials.js";
import type { MatchesSchema, SchemaMatches } from "../v1/schema-match.js";

const signalSchema = z.custom<AbortSignal>((value) => value === undefined || value instanceof AbortSignal, "must be an AbortSignal");

/** Default `maxIdleMs`: 10 minutes. */
export const DEFAULT_POOL_MAX_IDLE_MS = 600_000;
/** Default `refillConcurrency`: 2 creates at once. */
export const DEFAULT_POOL_REFILL_CONCURRENCY = 2;

/** Options of `createSandboxPool()`, validated before any backend is touched. */
export const sandboxPoolOptionsSchema = z
  .object({
    size: z.number().int().min(1).max(1_000),
    createOptions: z
      .custom<CreateSandboxOptions>((value) => value === undefined || (typeof value === "object" && value !== null), "must be an object")
      .optional(),
    maxIdleMs: z
      .number()
      .int()
      .min(1_000)
      .max(24 * 3600 * 1000)
      .default(DEFAULT_POOL_MAX_IDLE_MS),
    refillConcurrency: z.number().int().min(1).max(64).default(DEFAULT_POOL_REFILL_CONCURRENCY),
    signal: signalSchema.optional(),
  })
  .strict();

/** Options of `createSandboxPool()`. */
export interface SandboxPoolOptions {
  /** How many idle sandboxes the pool keeps ready (created, agent started). Required, 1 to 1000. */
  size: number;
  /**
   * What every sandbox of the pool is created with (image settings, network policy, limits, mounts, env, metadata:
   * everything fixed at create), as for `createSandbox`. `timeoutMs` is the lifetime counted from acquire (default
   * 600000). `secrets` are refused here: secrets and credentials are given per acquire, never baked in at pool time.
   */
  createOptions?: CreateSandboxOptions;
  /**
   * How long a sandbox may sit idle in the pool before it is destroyed and replaced, in ms. Default 600000 (10 min).
   * Why a bound: the backend's own deadline of a pooled sandbox is set at create to `maxIdleMs` + its lifetime, so
   * the idle bound is what keeps an acquired sandbox's lifetime whole.
   */
  maxIdleMs?: number;
  /** Most sandboxes being created at once while the pool refills. Default 2, so a refill never floods the backend. */
  refillConcurrency?: number;
  /** Aborting closes the pool (as `close()`). */
  signal?: AbortSignal;
}

/** `SandboxPoolOptions` and its schema name the same fields. */
// eslint-disable-next-line @typescript-eslint/no-unused-vars -- a compile-time check: the alias fails to type-check when schema and type drift
type SandboxPoolOptionsMatch = MatchesSchema<SchemaMatches<typeof sandboxPoolOptionsSchema, SandboxPoolOptions>>;

/** Options of `pool.acquire()`. */
export const acquireOptionsSchema = z
  .object({
    secrets: z.record(z.string(), z.unknown()).optional(),
    signal: signalSchema.optional(),
  })
  .strict();

/** Options of `pool.acquire()`. */
export interface AcquireSandboxOptions {
  /**
   * Secrets for this sandbox alone, as `createSandbox`'s `secrets`: plain values, or `credential()` sources issued
   * now for this sandbox and revoked when it ends. Default none.
   */
  secrets?: Record<string, string | CredentialSource>;
  /** Aborts waiting for a sandbox (when the pool is empty) and issuing credentials. */
  signal?: AbortSignal;
}

/** What `pool.stats()` reports. */
export interface SandboxPoolStats {
  /** Sandboxes ready to hand out. */
  readonly idle: number;
  /** Sandboxes being created. */
  readonly creating: number;
  /** Callers waiting in `acquire()`. */
  readonly waiting: number;
  /** Sandboxes created so far. */
  readonly created: number;
  /** Sandboxes handed out so far. */
  readonly acquired: number;
  /** Idle sandboxes destroyed after `maxIdleMs`. */
  readonly expired: number;
  /** Creates that failed. */
  readonly failed: number;
  /** The last create failure, or null. */
  readonly lastError: Error | null;
}
