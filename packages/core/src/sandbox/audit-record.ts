import type { AuditRecord, PolicyRecord } from "../v1/audit.js";
import type { SandboxDriverV1 } from "../v1/provider.js";
import type { SandboxContext } from "./sandbox-context.js";
import { redactValue } from "../security/redaction.js";
import { maxLiveProcessesOf } from "../limits/live-process-limit.js";
import { pooledSandboxPolicy } from "../pool/pooled-sandbox-facts.js";

/**
 * Builds a sandbox's audit record: the driver's policies and notes in core's envelope (ids, times, environment
 * names, scoped credentials). Structured values are redacted (every form of every secret), never the JSON text, so no
 * secret value can corrupt the record; the JSON round trip keeps it plain data.
 */
export function buildAuditRecord(input: {
  readonly driver: SandboxDriverV1;
  readonly context: SandboxContext;
  readonly createdAt: string;
  readonly closedAt: string | null;
  readonly secretValues: readonly string[];
  /** The `policies.lifetimeChanges` record once `setLifetime` changed the lifetime (ADR 0050). */
  readonly lifetimeChanges?: PolicyRecord;
  /** The `policies.pauses` record once `pause` was used (ADR 0055). */
  readonly pauses?: PolicyRecord;
}): AuditRecord {
  const { driver, context } = input;
  const record = {
    specificationVersion: "sbx-audit-v1",
    backend: context.provider.backend,
    backendVersion: driver.audit.backendVersion,
    sandboxId: driver.id,
    target: context.target,
    // A pooled sandbox was created when the pool asked the backend, not when it was acquired (ADR 0050).
    createdAt: context.pool ? new Date(context.pool.createdAt).toISOString() : input.createdAt,
    closedAt: input.closedAt,
    isolating: context.provider.isolating,
    // Core's own bound, the same on every backend (adr/0030).
    policies: {
      ...driver.audit.policies,
      processes: processesPolicy(maxLiveProcessesOf(context.options)),
      ...(context.pool ? { pool: pooledSandboxPolicy(context.pool) } : {}),
      ...(input.lifetimeChanges ? { lifetimeChanges: input.lifetimeChanges } : {}),
      ...(input.pauses ? { pauses: input.pauses } : {}),
    },
    environment: { variables: Object.keys(context.options.env).sort(), secrets: Object.keys(context.options.secrets).sort() },
    credentials: context.credentials?.auditEntries() ?? [],
    notes: [...(driver.audit.notes ?? [])],
  } satisfies AuditRecord;
  return redactValue(JSON.parse(JSON.stringify(record)) as AuditRecord, [...input.secretValues]);
}

/** The `policies.processes` record: the most commands that run at once, enforced by core on every backend. */
function processesPolicy(maxLiveProcesses: number) {
  return {
    requested: { maxLiveProcesses },
    applied: { maxLiveProcesses },
    enforcement: `sbx core: commands.run and commands.start beyond ${maxLiveProcesses} commands running at once in this sandbox are refused with TooManyProcessesError before the backend is asked`,
  };
}
