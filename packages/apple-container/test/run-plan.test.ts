import { createSandboxOptionsSchema } from "@sbx/core";
import { describe, expect, it } from "vitest";
import { auditFromInspect } from "../src/container-audit.js";
import { parseContainers, parseVersionLine } from "../src/container-output.js";
import { planContainerRun } from "../src/container-run-plan.js";

function plan(options: Record<string, unknown>) {
  const create = createSandboxOptionsSchema.parse(options);
  return { create, plan: planContainerRun({ id: "sbx-test", image: "python:3.12-slim", create, defaultUser: "10001:10001", now: 0, ownerPid: 42 }) };
}

describe("planContainerRun", () => {
  it("denies egress with --network none --no-dns, runs init as root with the lifetime, labels the container", () => {
    const { plan: planned } = plan({ timeoutMs: 90_500 });
    expect(planned.arguments).toEqual(expect.arrayContaining(["--network", "none", "--no-dns", "--rm", "--user", "0:0"]));
    expect(planned.arguments.slice(-9)).toEqual([
      "--entrypoint",
      "sh",
      "python:3.12-slim",
      "-c",
      'chown "$1" "$2"; exec sleep "$3"',
      "sbx-init",
      "10001:10001",
      "/workspace",
      "91",
    ]);
    // A mount at the workspace keeps its host owner: no chown.
    expect(plan({ mounts: [{ hostPath: "/wt", sandboxPath: "/workspace" }] }).plan.arguments).toContain('exec sleep "$3"');
    expect(planned.arguments).toEqual(expect.arrayContaining(["dev.sbx.managed=true", "dev.sbx.owner.pid=42", "dev.sbx.expires-at=91000"]));
    expect(planned.commandUser).toBe("10001:10001");
  });

  it("allows egress through the default NAT network (no --network)", () => {
    expect(plan({ network: { egress: "allow" } }).plan.arguments).not.toContain("--network");
  });

  it("passes whole CPUs and memory; refuses pids (naming backends that can), fractions and less than 200 MiB", () => {
    expect(plan({ limits: { cpus: 2, memoryMiB: 512 } }).plan.arguments).toEqual(expect.arrayContaining(["--cpus", "2", "--memory", "512M"]));
    const pids = (() => {
      try {
        plan({ limits: { pids: 64 } });
      } catch (error) {
        return error as { code: string; supportedBy: string[] };
      }
    })();
    expect(pids?.code).toBe("SBX_CAPABILITY_NOT_SUPPORTED");
    expect(pids?.supportedBy).toContain("docker");
    expect(pids?.supportedBy).not.toContain("modal");
    expect(() => plan({ limits: { cpus: 1.5 } })).toThrow(/whole CPUs/);
    expect(() => plan({ limits: { memoryMiB: 128 } })).toThrow(/200 MiB/);
  });

  it("mounts read-only and read-write directories; refuses a path the --mount grammar cannot carry", () => {
    const { plan: planned } = plan({
      mounts: [
        { hostPath: "/repo", sandboxPath: "/workspace/repo", readOnly: true },
        { hostPath: "/wt", sandboxPath: "/wt" },
      ],
    });
    expect(planned.arguments).toEqual(
      expect.arrayContaining(["type=bind,source=/repo,target=/workspace/repo,readonly", "type=bind,source=/wt,target=/wt"]),
    );
    expect(() => plan({ mounts: [{ hostPath: "/a,b", sandboxPath: "/x" }] })).toThrow(/splits on ","/);
    expect(() => plan({ metadata: { k: "a=b" } })).toThrow(/without "="/);
  });
});

describe("auditFromInspect", () => {
  const version = parseVersionLine("container CLI version 1.2.2 (build: release, commit: 0190097)")!;
  const record = (overrides: string) =>
    parseContainers(
      `[{"id":"sbx-test","configuration":{"id":"sbx-test","labels":{},"mounts":[{"type":{"virtiofs":{}},"source":"/repo","destination":"/r","options":[]}],"networks":${overrides},"resources":{"cpus":1,"memoryInBytes":268435456}},"status":{"state":"running","networks":[]}}]`,
    )![0]!;

  it("records what inspect reports", () => {
    const { create, plan: planned } = plan({ limits: { cpus: 1, memoryMiB: 256 }, mounts: [{ hostPath: "/repo", sandboxPath: "/r" }] });
    const audit = auditFromInspect({ record: record("[]"), plan: planned, create, version });
    expect(audit.policies.network.applied).toEqual({ egress: "deny", networks: [] });
    expect(audit.policies.limits.applied).toEqual({ cpus: 1, memoryMiB: 256 });
    expect(audit.backendVersion).toContain("1.2.2");
  });

  it("fails closed when inspect contradicts the request (a network under deny, other limits, a writable read-only mount)", () => {
    const { create, plan: planned } = plan({ limits: { cpus: 2 } });
    expect(() => auditFromInspect({ record: record("[]"), plan: planned, create, version })).toThrow(/2 CPUs were asked/);
    const denied = plan({});
    expect(() => auditFromInspect({ record: record('[{"network":"default"}]'), plan: denied.plan, create: denied.create, version })).toThrow(
      /Egress deny/,
    );
    const readOnly = plan({ mounts: [{ hostPath: "/repo", sandboxPath: "/r", readOnly: true }] });
    expect(() => auditFromInspect({ record: record("[]"), plan: readOnly.plan, create: readOnly.create, version })).toThrow(/read-only/);
  });
});
