import type { PolicyRecord } from "../v1/audit.js";

/** What the audit record of a sandbox handed out by a pool says about its time in the pool (ADR 0050). */
export interface PooledSandboxFacts {
  /** Epoch ms the backend was asked to create the sandbox (it sat idle in the pool from then until `acquiredAt`). */
  readonly createdAt: number;
  /** Epoch ms `acquire()` handed it out: its lifetime counts from here. */
  readonly acquiredAt: number;
  /** The lifetime from acquire, in ms (the pool's `createOptions.timeoutMs`). */
  readonly lifetimeMs: number;
  /** How long a sandbox may sit idle in the pool before it is replaced, in ms. */
  readonly maxIdleMs: number;
}

/**
 * The `policies.pool` record of a pooled sandbox: that it came from a pool, when it was created and acquired, and how
 * its lifetime is enforced (from acquire by the host, bounded by the backend's own deadline set at create to the idle
 * bound plus the lifetime).
 */
export function pooledSandboxPolicy(facts: PooledSandboxFacts): PolicyRecord {
  const endsAt = facts.acquiredAt + facts.lifetimeMs;
  const backendDeadline = facts.createdAt + facts.maxIdleMs + facts.lifetimeMs;
  return {
    requested: { pooled: true, lifetimeMs: facts.lifetimeMs, maxIdleMs: facts.maxIdleMs },
    applied: {
      pooled: true,
      createdAt: new Date(facts.createdAt).toISOString(),
      acquiredAt: new Date(facts.acquiredAt).toISOString(),
      idleMs: facts.acquiredAt - facts.createdAt,
      endsAt: new Date(endsAt).toISOString(),
      backendDeadline: new Date(backendDeadline).toISOString(),
    },
    enforcement:
      "sbx core pool: created before it was asked for, with no secrets, and handed out once; the host ends it lifetimeMs after acquire (endsAt), and the backend's own deadline, set at create to maxIdleMs + lifetimeMs and out of the sandbox's reach, ends it at backendDeadline at the latest, even if the host dies",
  };
}
