import { CapabilityNotSupportedError, InvalidArgumentError, type PolicyRecord, type ResourceLimits } from "@sbx/core";
import { backendsSupporting } from "@sbx/core/adapter";

/** Modal's largest sandbox lifetime: 24 hours. */
export const MODAL_MAX_TIMEOUT_MS = 24 * 3600 * 1000;

/** The resource fields sent in Modal's create request. */
export interface ModalLimitsRequest {
  /** CPU reservation in cores; sent equal to `cpuLimit` so the request is also the guarantee. */
  readonly cpu?: number;
  /** Hard CPU limit in cores. */
  readonly cpuLimit?: number;
  /** Memory reservation in MiB; sent equal to `memoryLimitMiB`. */
  readonly memoryMiB?: number;
  /** Hard memory limit in MiB (the sandbox is OOM-killed above it). */
  readonly memoryLimitMiB?: number;
}

/**
 * Maps sbx limits onto Modal's CPU and memory hard limits. A pids limit is refused (Modal has none), as are CPU
 * values finer than Modal's thousandths of a core (they would be truncated).
 */
export function planModalLimits(limits: ResourceLimits | undefined): { request: ModalLimitsRequest; record: PolicyRecord } {
  if (!limits || Object.values(limits).every((value) => value === undefined)) {
    return {
      request: {},
      record: {
        requested: null,
        applied: null,
        enforcement:
          "None requested: Modal's defaults apply (a fraction of a core reserved, burstable; memory reserved by Modal's default, no hard limit set by sbx).",
      },
    };
  }
  if (limits.pids !== undefined) {
    throw new CapabilityNotSupportedError({
      capability: "RESOURCE_LIMITS",
      backend: "modal",
      supportedBy: backendsSupporting("RESOURCE_LIMITS", "modal"),
      detail: "limits.pids: Modal has no process-count limit (only CPU and memory), so it was refused rather than ignored",
    });
  }
  const request: { cpu?: number; cpuLimit?: number; memoryMiB?: number; memoryLimitMiB?: number } = {};
  const applied: Record<string, number> = {};
  if (limits.cpus !== undefined) {
    if (!Number.isInteger(Math.round(limits.cpus * 1000 * 1e6) / 1e6)) {
      throw new InvalidArgumentError({
        field: "limits.cpus",
        backend: "modal",
        message: `Invalid limits.cpus ${limits.cpus}: Modal takes CPU in thousandths of a core; give at most three decimals.`,
      });
    }
    request.cpu = limits.cpus;
    request.cpuLimit = limits.cpus;
    applied.cpus = limits.cpus;
  }
  if (limits.memoryMiB !== undefined) {
    request.memoryMiB = limits.memoryMiB;
    request.memoryLimitMiB = limits.memoryMiB;
    applied.memoryMiB = limits.memoryMiB;
  }
  return {
    request,
    record: {
      requested: { ...limits },
      applied,
      enforcement: `Modal create request with ${JSON.stringify(request)}: the reservation equals the hard limit, enforced by Modal's container runtime (CPU throttled above cpuLimit; processes OOM-killed above memoryLimitMiB). Modal's SDK offers no read-back of these values.`,
    },
  };
}

/** Modal's lifetime fields (whole seconds, in milliseconds as the SDK takes them) and the audit record. */
export function planModalLifetime(
  timeoutMs: number,
  idleTimeoutMs: number | undefined,
): { request: { timeoutMs: number; idleTimeoutMs?: number }; record: PolicyRecord; notes: string[] } {
  const notes: string[] = [];
  let appliedTimeoutMs = Math.ceil(timeoutMs / 1000) * 1000;
  if (appliedTimeoutMs !== timeoutMs)
    notes.push(`Modal takes the sandbox timeout in whole seconds: ${timeoutMs} ms was rounded up to ${appliedTimeoutMs} ms.`);
  if (appliedTimeoutMs > MODAL_MAX_TIMEOUT_MS) {
    notes.push(`Modal's sandbox lifetime is at most 24 hours: ${timeoutMs} ms was capped to ${MODAL_MAX_TIMEOUT_MS} ms.`);
    appliedTimeoutMs = MODAL_MAX_TIMEOUT_MS;
  }
  let appliedIdleMs: number | undefined;
  if (idleTimeoutMs !== undefined) {
    appliedIdleMs = Math.ceil(idleTimeoutMs / 1000) * 1000;
    if (appliedIdleMs !== idleTimeoutMs)
      notes.push(`Modal takes the idle timeout in whole seconds: ${idleTimeoutMs} ms was rounded up to ${appliedIdleMs} ms.`);
  }
  return {
    request: appliedIdleMs === undefined ? { timeoutMs: appliedTimeoutMs } : { timeoutMs: appliedTimeoutMs, idleTimeoutMs: appliedIdleMs },
    record: {
      requested: idleTimeoutMs === undefined ? { timeoutMs } : { timeoutMs, idleTimeoutMs },
      applied: appliedIdleMs === undefined ? { timeoutMs: appliedTimeoutMs } : { timeoutMs: appliedTimeoutMs, idleTimeoutMs: appliedIdleMs },
      enforcement: `Modal terminates the sandbox ${appliedTimeoutMs / 1000} s after it starts (the create request's timeout)${appliedIdleMs === undefined ? "" : `, or after ${appliedIdleMs / 1000} s with no command running and no I/O (idle timeout; the sbx agent's exec, kept open from the first code call, file watch or exposed-port connection until the sandbox ends, is a command running, so after that only the timeout ends it)`}, even if this process dies. Modal's SDK offers no read-back of the lifetime.`,
    },
    notes,
  };
}
