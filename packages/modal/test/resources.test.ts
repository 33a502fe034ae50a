import { isSbxError } from "@sbx/core";
import { describe, expect, it } from "vitest";
import { MODAL_MAX_TIMEOUT_MS, planModalLifetime, planModalLimits } from "../src/modal-resources.js";

describe("planModalLimits", () => {
  it("no limits: nothing sent, the record says Modal's defaults apply", () => {
    const plan = planModalLimits(undefined);
    expect(plan.request).toEqual({});
    expect(plan.record.requested).toBeNull();
  });

  it("cpus and memoryMiB are sent as reservation and hard limit alike", () => {
    const plan = planModalLimits({ cpus: 1.5, memoryMiB: 512 });
    expect(plan.request).toEqual({ cpu: 1.5, cpuLimit: 1.5, memoryMiB: 512, memoryLimitMiB: 512 });
    expect(plan.record.requested).toEqual({ cpus: 1.5, memoryMiB: 512 });
    expect(plan.record.applied).toEqual({ cpus: 1.5, memoryMiB: 512 });
    expect(plan.record.enforcement).toContain("memoryLimitMiB");
  });

  it("a pids limit is refused with CapabilityNotSupportedError naming the backends that have one", () => {
    let caught: unknown;
    try {
      planModalLimits({ cpus: 1, pids: 64 });
    } catch (error) {
      caught = error;
    }
    expect(isSbxError(caught, "SBX_CAPABILITY_NOT_SUPPORTED")).toBe(true);
    expect((caught as { capability: string }).capability).toBe("RESOURCE_LIMITS");
    expect((caught as Error).message).toContain("limits.pids");
    expect((caught as { supportedBy: string[] }).supportedBy).toContain("docker");
    expect((caught as { supportedBy: string[] }).supportedBy).not.toContain("modal");
  });

  it("CPU finer than a thousandth of a core is refused, not truncated", () => {
    let caught: unknown;
    try {
      planModalLimits({ cpus: 0.3333 });
    } catch (error) {
      caught = error;
    }
    expect(isSbxError(caught, "SBX_INVALID_ARGUMENT")).toBe(true);
    expect((caught as { field: string }).field).toBe("limits.cpus");
    expect(planModalLimits({ cpus: 0.125 }).request).toEqual({ cpu: 0.125, cpuLimit: 0.125 });
  });
});

describe("planModalLifetime", () => {
  it("a whole-second timeout is sent as is, with no note", () => {
    const plan = planModalLifetime(600_000, undefined);
    expect(plan.request).toEqual({ timeoutMs: 600_000 });
    expect(plan.record.applied).toEqual({ timeoutMs: 600_000 });
    expect(plan.notes).toEqual([]);
  });

  it("a timeout with a fraction of a second is rounded up to whole seconds, and the record says so", () => {
    const plan = planModalLifetime(1_500, 2_200);
    expect(plan.request).toEqual({ timeoutMs: 2_000, idleTimeoutMs: 3_000 });
    expect(plan.record.requested).toEqual({ timeoutMs: 1_500, idleTimeoutMs: 2_200 });
    expect(plan.record.applied).toEqual({ timeoutMs: 2_000, idleTimeoutMs: 3_000 });
    expect(plan.notes.join("\n")).toContain("1500 ms was rounded up to 2000 ms");
    expect(plan.notes.join("\n")).toContain("2200 ms was rounded up to 3000 ms");
    expect(plan.record.enforcement).toContain("idle timeout");
  });

  it("a lifetime above Modal's 24 hours is capped, and the record says so", () => {
    const plan = planModalLifetime(7 * 24 * 3600 * 1000, undefined);
    expect(plan.request.timeoutMs).toBe(MODAL_MAX_TIMEOUT_MS);
    expect(plan.record.applied).toEqual({ timeoutMs: MODAL_MAX_TIMEOUT_MS });
    expect(plan.notes.join("\n")).toContain("capped");
  });
});
