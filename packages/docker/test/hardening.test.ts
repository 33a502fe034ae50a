import { createSandbox, isSbxError } from "@sbx/core";
import { afterAll, beforeAll, expect, it } from "vitest";
import { createSandboxProvider, docker as dockerAlias, PROCESS_SESSION } from "../src/index.js";
import { findMismatches, policyNotEnforced } from "../src/policy-readback.js";
import { requestedPolicy } from "../src/container-config.js";
import { parseDockerSettings } from "../src/docker-settings.js";
import { createTestSandbox, describeWithDocker, docker, TEST_IMAGE } from "./docker-test-environment.js";
import type { Sandbox } from "@sbx/core";

describeWithDocker("hardened defaults, read back from the engine", () => {
  let sandbox: Sandbox;
  beforeAll(async () => {
    sandbox = await createTestSandbox();
  });
  afterAll(async () => {
    await sandbox?.kill();
  });

  it("the engine reports every hardening option as applied", async () => {
    const inspect = await docker.getContainer(sandbox.id).inspect();
    const host = inspect.HostConfig as typeof inspect.HostConfig & Record<string, unknown>;
    expect(host.CapDrop).toEqual(["ALL"]);
    expect(host.SecurityOpt).toContain("no-new-privileges:true");
    expect(host.PidsLimit).toBe(256);
    expect(host.Memory).toBe(512 * 1024 * 1024);
    expect(host.MemorySwap).toBe(512 * 1024 * 1024);
    expect(host.NanoCpus).toBe(1e9);
    expect(host.Init).toBe(true);
    expect(host.ReadonlyRootfs).toBe(true);
    expect(host.LogConfig?.Type).toBe("none");
    expect(host.NetworkMode).toBe("none");
    expect(host.Privileged).toBe(false);
    // The container (its init and deadline) is root; every command runs as 10001 (see the lifetime tests).
    expect(inspect.Config.User).toBe("0:0");
    expect(host.CapAdd).toEqual(["KILL"]);
    expect(inspect.Config.Entrypoint?.[0]).toBe("sh");
    expect(inspect.Config.Labels).toMatchObject({ "sbx.managed": "1", "sbx.owner.pid": String(process.pid), "sbx.session": PROCESS_SESSION });
    expect(Date.parse(inspect.Config.Labels["sbx.expires-at"]!)).toBeGreaterThan(Date.now());
    expect(inspect.Mounts.find((mount) => mount.Destination === "/workspace")?.Type).toBe("volume");
  });

  it("inside: no capabilities, no-new-privileges, seccomp on, unprivileged user, read-only root, tmpfs /tmp, cgroup limits", async () => {
    const result = await sandbox.commands.run(
      "grep -E '^(CapEff|NoNewPrivs|Seccomp):' /proc/self/status; id -u; touch /rootfs-write 2>/dev/null && echo rootfs-writable || echo rootfs-readonly; touch /tmp/x && echo tmp-ok; cat /sys/fs/cgroup/pids/pids.max /sys/fs/cgroup/memory/memory.limit_in_bytes 2>/dev/null",
    );
    expect(result.stdout).toMatch(/CapEff:\s+0000000000000000/);
    expect(result.stdout).toMatch(/NoNewPrivs:\s+1/);
    expect(result.stdout).toMatch(/Seccomp:\s+2/);
    expect(result.stdout).toContain("10001\n");
    expect(result.stdout).toContain("rootfs-readonly");
    expect(result.stdout).toContain("tmp-ok");
    expect(result.stdout).toContain("256\n");
    expect(result.stdout).toContain(String(512 * 1024 * 1024));
  });

  it("the audit record carries each policy with how it is enforced, plus engine version and runtime", () => {
    const audit = sandbox.audit();
    expect(audit.backend).toBe("docker");
    expect(audit.backendVersion).toMatch(/^Docker Engine \S+ \(API [\d.]+\)$/);
    for (const key of ["network", "limits", "mounts", "user", "lifetime", "capabilities", "privileges", "rootFilesystem", "runtime", "logging"]) {
      expect(audit.policies[key], key).toBeDefined();
      expect(audit.policies[key]!.enforcement.length, key).toBeGreaterThan(10);
    }
    expect(audit.policies.network.applied).toMatchObject({ egress: "deny", networkMode: "none" });
    expect(audit.policies.limits.applied).toMatchObject({ cpus: 1, memoryMiB: 512, memorySwapMiB: 512, pids: 256 });
    expect(audit.policies.runtime.applied).toBe("runc");
    expect(audit.policies.logging.applied).toBe("none");
    expect(audit.policies.user.applied).toBe("10001:10001");
  });

  it("a file written through the archive API is the file a command sees (the workspace is not a blind tmpfs)", async () => {
    const bytes = new Uint8Array(300_000).map((_, index) => (index * 7) % 251);
    await sandbox.files.write("round/trip.bin", bytes);
    const digest = await sandbox.commands.run("sha256sum round/trip.bin | cut -d' ' -f1");
    const { createHash } = await import("node:crypto");
    expect(digest.stdout.trim()).toBe(createHash("sha256").update(bytes).digest("hex"));
    expect(Buffer.from(await sandbox.files.read("round/trip.bin", { format: "bytes" })).equals(Buffer.from(bytes))).toBe(true);
  });

  it("a container log flood does not reach the host (LogConfig none)", async () => {
    await sandbox.commands.run("head -c 1000000 /dev/zero > /proc/1/fd/1 2>/dev/null; true");
    const inspect = await docker.getContainer(sandbox.id).inspect();
    expect(inspect.LogPath ?? "").toBe("");
  });
});

describeWithDocker("users, limits and settings", () => {
  it("root only when asked, and recorded", async () => {
    await using sandbox = await createTestSandbox({ user: "root" });
    expect((await sandbox.commands.run("id -u")).stdout.trim()).toBe("0");
    expect(sandbox.audit().policies.user).toMatchObject({ requested: "root", applied: "0:0" });
    const capabilities = await sandbox.commands.run("grep CapEff /proc/self/status");
    expect(capabilities.stdout).toMatch(/0000000000000000/);
  });

  it("custom limits are applied and read back", async () => {
    await using sandbox = await createTestSandbox({ limits: { cpus: 0.5, memoryMiB: 256, pids: 64 } });
    expect(sandbox.audit().policies.limits.applied).toMatchObject({ cpus: 0.5, memoryMiB: 256, memorySwapMiB: 256, pids: 64 });
  });

  it("works with an image that has a non-shell ENTRYPOINT and another WORKDIR", async () => {
    await using other = await createSandbox("docker://sbx-test/python-entrypoint:3.11");
    const result = await other.commands.run("pwd; echo $SBX_IMAGE_FLAVOUR");
    expect(result.stdout).toBe("/workspace\nentrypoint\n");
    expect((await other.runCode("print(6 * 7)")).stdout).toBe("42\n");
  });

  it("the docker:// target overrides settings.image, and docker() is the provider factory", async () => {
    await using sandbox = (await createSandbox(dockerAlias({ image: "does-not-exist/never:1", pull: false }), {}).catch(() => undefined)) as
      Sandbox | undefined;
    expect(sandbox).toBeUndefined();
    await using fromTarget = await createSandbox(`docker://${TEST_IMAGE}`, { settings: { image: "does-not-exist/never:1", pull: false } });
    const inspect = await docker.getContainer(fromTarget.id).inspect();
    expect(inspect.Config.Image).toBe(TEST_IMAGE);
  });

  it("settings are validated and a bad field is named", () => {
    for (const [settings, field] of [
      [{ bridgeNetwrk: "x" }, "settings.bridgeNetwrk"],
      [{ user: "nobody" }, "settings.user"],
      [{ image: "" }, "settings.image"],
      [{ host: "ftp://x" }, "settings.host"],
    ] as const) {
      try {
        createSandboxProvider(settings as Record<string, unknown>);
        expect.fail("no error");
      } catch (error) {
        expect(isSbxError(error, "SBX_INVALID_ARGUMENT")).toBe(true);
        expect((error as { field: string }).field).toBe(field);
      }
    }
  });

  it("a missing bridge network is an invalid setting, and nothing is left behind", async () => {
    // This process's containers only: other test files run in parallel on the same engine.
    const before = (await docker.listContainers({ all: true, filters: { label: ["sbx.managed=1", `sbx.owner.pid=${process.pid}`] } })).length;
    await expect(createTestSandbox({ network: { egress: "allow" } }, { bridgeNetwork: "sbx-no-such-network" })).rejects.toMatchObject({
      code: "SBX_INVALID_ARGUMENT",
      field: "settings.bridgeNetwork",
    });
    expect(
      (await docker.listContainers({ all: true, filters: { label: ["sbx.managed=1", `sbx.owner.pid=${process.pid}`] } })).length,
    ).toBeLessThanOrEqual(before);
  });

  it("an invalid allowlist entry is refused before anything is created", async () => {
    // This process's containers only: other test files run in parallel on the same engine.
    const before = (await docker.listContainers({ all: true, filters: { label: ["sbx.managed=1", `sbx.owner.pid=${process.pid}`] } })).length;
    await expect(createTestSandbox({ network: { egress: "deny", allow: ["pypi.org:99999"] } })).rejects.toMatchObject({
      code: "SBX_INVALID_ARGUMENT",
      field: "network.allow.0",
    });
    expect(
      (await docker.listContainers({ all: true, filters: { label: ["sbx.managed=1", `sbx.owner.pid=${process.pid}`] } })).length,
    ).toBeLessThanOrEqual(before);
  });
});

it("an unreachable engine: detect() says why without throwing; create raises BackendUnavailableError naming the socket", async () => {
  const provider = createSandboxProvider({ socketPath: "/tmp/sbx-no-such-docker.sock" });
  const status = await provider.detect();
  expect(status.usable).toBe(false);
  expect(status.reason).toContain("/tmp/sbx-no-such-docker.sock");
  expect(status.remedy).toMatch(/Start Docker/);
  expect(status.remedy).toMatch(/e2b/);
  const error = await createSandbox(provider).catch((caught: unknown) => caught);
  expect(isSbxError(error, "SBX_BACKEND_UNAVAILABLE")).toBe(true);
  expect((error as Error).message).toContain("unix:///tmp/sbx-no-such-docker.sock");
  expect((error as { alternatives: string[] }).alternatives.join(" ")).toMatch(/fake/);
});

it("a policy the engine reports differently fails closed with PolicyNotEnforcedError", () => {
  const policy = requestedPolicy(
    "img",
    {
      network: { egress: "deny" },
      timeoutMs: 60_000,
      env: {},
      secrets: {},
      metadata: {},
      mounts: [],
      user: "default",
      allowFake: false,
      settings: {},
    },
    parseDockerSettings({}),
  );
  const inspect = {
    Config: { User: "0:0" },
    Mounts: [{ Destination: "/workspace", Type: "volume", RW: true }],
    HostConfig: {
      NetworkMode: "none",
      CapDrop: ["ALL"],
      CapAdd: ["KILL"],
      SecurityOpt: ["no-new-privileges:true"],
      Privileged: false,
      PidsLimit: 0,
      Memory: 512 * 1024 * 1024,
      MemorySwap: -1,
      NanoCpus: 1e9,
      Init: true,
      ReadonlyRootfs: true,
      LogConfig: { Type: "none" },
    },
  } as never;
  const mismatches = findMismatches(policy, inspect);
  expect(mismatches.map((mismatch) => mismatch.policy)).toEqual(["limits.pids", "limits.memorySwap"]);
  const error = policyNotEnforced(mismatches, ["Your kernel does not support swap limit capabilities"]);
  expect(error.code).toBe("SBX_POLICY_NOT_ENFORCED");
  expect(error.policy).toBe("limits.pids");
  expect(error.message).toMatch(/fail closed/);
});
