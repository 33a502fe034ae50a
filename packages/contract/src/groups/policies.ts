import { chmod, mkdtemp, readFile, readdir, rm, writeFile, access } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { connectSandbox, createSandbox, type ResourceLimits } from "@sbx/core";
import { expect } from "vitest";
import { expectPathError } from "./file-policy.js";
import {
  countingProvider,
  describeGroup,
  expectCapabilityRefused,
  expectSbxError,
  mergeCreateOptions,
  type ContractHarness,
  type SandboxContractOptions,
  type SandboxProviderFactoryForContract,
} from "../harness.js";

async function hostExists(path: string): Promise<boolean> {
  return access(path).then(
    () => true,
    () => false,
  );
}

/** Fills a host folder with `hello.txt` ("from the host"), both writable for everyone: only a mount can refuse writes. */
async function fillWritableForEveryone(hostFolder: string): Promise<void> {
  await chmod(hostFolder, 0o777);
  await writeFile(join(hostFolder, "hello.txt"), "from the host");
  await chmod(join(hostFolder, "hello.txt"), 0o666);
}

/** Registers the host mount tests (`HOST_MOUNTS`), or their refusal when it is off. */
export function registerMountsTests(harness: ContractHarness): void {
  const { contractTest, capabilities, options } = harness;
  const mountPath = options.mountPath ?? "/mnt/sbx-contract";

  if (!capabilities.HOST_MOUNTS) {
    contractTest("mounts.refused", "mounts raise SBX_CAPABILITY_NOT_SUPPORTED before anything is created", async () => {
      const counting = countingProvider(harness.provider);
      await expectCapabilityRefused(
        harness,
        () =>
          createSandbox(
            counting.provider,
            mergeCreateOptions(options.createOptions, { mounts: [{ hostPath: tmpdir(), sandboxPath: mountPath, readOnly: true }] }),
          ),
        "HOST_MOUNTS",
      );
      expect(counting.creates()).toBe(0);
    });
    return;
  }

  contractTest("mounts.read-only", "a read-only mount is readable and not writable", async () => {
    const hostFolder = await mkdtemp(join(tmpdir(), "sbx-contract-mount-"));
    try {
      await fillWritableForEveryone(hostFolder);
      await using sandbox = await harness.createSandbox({ mounts: [{ hostPath: hostFolder, sandboxPath: `${mountPath}-ro`, readOnly: true }] });
      expect((await sandbox.commands.run(`cat ${mountPath}-ro/hello.txt`)).stdout).toBe("from the host");
      const write = await sandbox.commands.run(`echo changed > ${mountPath}-ro/hello.txt; echo new > ${mountPath}-ro/new.txt`);
      expect(write.exitCode).not.toBe(0);
      expect(await readFile(join(hostFolder, "hello.txt"), "utf8")).toBe("from the host");
      expect(await hostExists(join(hostFolder, "new.txt"))).toBe(false);
    } finally {
      await rm(hostFolder, { recursive: true, force: true });
    }
  });

  contractTest(
    "mounts.read-only-files-api",
    "writes to a read-only mount through the files API are PathError read-only (write, mkdir, remove, rename) and change nothing on the host",
    async () => {
      const hostFolder = await mkdtemp(join(tmpdir(), "sbx-contract-mount-"));
      try {
        await fillWritableForEveryone(hostFolder);
        // The files API is confined to the workspace, so the mount goes inside it: learn where the workspace is first.
        let workspace: string;
        {
          await using probe = await harness.createSandbox();
          workspace = probe.workspace;
        }
        await using sandbox = await harness.createSandbox({
          mounts: [{ hostPath: hostFolder, sandboxPath: `${workspace}/read-only`, readOnly: true }],
        });
        expect(await sandbox.files.read("read-only/hello.txt")).toBe("from the host");
        await expectPathError(() => sandbox.files.write("read-only/hello.txt", "changed"), "read-only");
        await expectPathError(() => sandbox.files.write("read-only/new.txt", "new"), "read-only");
        await expectPathError(() => sandbox.files.write("read-only/folder/new.txt", "new"), "read-only");
        await expectPathError(() => sandbox.files.mkdir("read-only/folder"), "read-only");
        await expectPathError(() => sandbox.files.remove("read-only/hello.txt"), "read-only");
        await expectPathError(() => sandbox.files.rename("read-only/hello.txt", "read-only/moved.txt"), "read-only");
        expect(await readFile(join(hostFolder, "hello.txt"), "utf8")).toBe("from the host");
        expect(await readdir(hostFolder)).toEqual(["hello.txt"]);
      } finally {
        await rm(hostFolder, { recursive: true, force: true });
      }
    },
  );

  contractTest("mounts.read-write", "a read-write mount is writable, and writes reach the host folder", async () => {
    const hostFolder = await mkdtemp(join(tmpdir(), "sbx-contract-mount-"));
    try {
      await chmod(hostFolder, 0o777);
      await using sandbox = await harness.createSandbox({ mounts: [{ hostPath: hostFolder, sandboxPath: `${mountPath}-rw`, readOnly: false }] });
      const write = await sandbox.commands.run(`printf 'from the sandbox' > ${mountPath}-rw/written.txt`);
      expect(write.exitCode).toBe(0);
      expect(await readFile(join(hostFolder, "written.txt"), "utf8")).toBe("from the sandbox");
    } finally {
      await rm(hostFolder, { recursive: true, force: true });
    }
  });
}

/** Registers the resource limit tests (`RESOURCE_LIMITS`), or their refusal when it is off. */
export function registerLimitsTests(harness: ContractHarness): void {
  const { contractTest, capabilities, options } = harness;
  const allLimits = { cpus: 1, memoryMiB: 256, pids: 128 };
  const limits = harness.options.limits ?? allLimits;

  if (!capabilities.RESOURCE_LIMITS) {
    contractTest("limits.refused", "limits raise SBX_CAPABILITY_NOT_SUPPORTED before anything is created", async () => {
      const counting = countingProvider(harness.provider);
      await expectCapabilityRefused(
        harness,
        () => createSandbox(counting.provider, mergeCreateOptions(options.createOptions, { limits })),
        "RESOURCE_LIMITS",
      );
      expect(counting.creates()).toBe(0);
    });
    return;
  }

  contractTest(
    "limits.applied",
    "each requested limit is applied with exactly the requested value (read back); limits the backend lacks are refused",
    async () => {
      await using sandbox = await harness.createSandbox({ limits });
      const record = sandbox.audit().policies.limits;
      expect(record.requested).toMatchObject(limits);
      const applied = record.applied as Record<string, unknown>;
      expect(applied).toBeTypeOf("object");
      for (const [key, value] of Object.entries(limits)) expect(applied[key], `limits.${key} applied`).toBe(value);
      expect((await sandbox.commands.run("echo limited")).stdout).toBe("limited\n");
      // A limit the adapter does not apply must be refused before anything is created, never recorded and ignored.
      for (const [key, value] of Object.entries(allLimits)) {
        if (key in limits) continue;
        await expectSbxError(
          () => createSandbox(harness.provider, mergeCreateOptions(options.createOptions, { limits: { ...limits, [key]: value } })),
          "SBX_CAPABILITY_NOT_SUPPORTED",
        );
      }
    },
  );

  registerLimitMeasurements(harness, limits);
}

/** Reads the CPU quota of the sandbox's own cgroup (v2 `cpu.max`, else v1 `cfs_quota_us`/`cfs_period_us`) and `nproc`. */
const CPU_LIMIT_COMMAND = [
  'if [ -r /sys/fs/cgroup/cpu.max ]; then echo "quota $(cat /sys/fs/cgroup/cpu.max)";',
  'elif [ -r /sys/fs/cgroup/cpu/cpu.cfs_quota_us ]; then echo "quota $(cat /sys/fs/cgroup/cpu/cpu.cfs_quota_us) $(cat /sys/fs/cgroup/cpu/cpu.cfs_period_us)"; fi',
  'echo "nproc $(nproc 2>/dev/null || echo unknown)"',
].join("\n");

/**
 * Starts up to `attempts` sleeping processes, counting in `forks.txt` each one that started; fork failing ends the
 * subshell. Only builtins run after the loop (the process table may be full), so the count can still be printed.
 */
function forkLoopCommand(attempts: number): string {
  return [
    "rm -f forks.txt",
    `( n=0; while [ "$n" -lt ${attempts} ]; do sleep 30 </dev/null >/dev/null 2>&1 & n=$((n + 1)); echo "$n" > forks.txt; done ) 2>/dev/null`,
    "read started < forks.txt",
    'echo "started $started"',
  ].join("\n");
}

/** Parses the CPU limit a command reported: quota/period from the cgroup (or null for "max"), and nproc. */
function parseCpuLimit(output: string): { cgroupCpus: number | null | undefined; nproc: number | undefined } {
  const quota = /^quota (\S+) (\d+)$/m.exec(output);
  const nproc = /^nproc (\d+)$/m.exec(output);
  let cgroupCpus: number | null | undefined;
  if (quota) cgroupCpus = quota[1] === "max" || quota[1] === "-1" ? null : Number(quota[1]) / Number(quota[2]);
  return { cgroupCpus, nproc: nproc ? Number(nproc[1]) : undefined };
}

/**
 * Registers the limit measurements (ADR 0029): each limit the backend applies is measured from inside the sandbox,
 * not read from the audit record. Memory: an allocation of twice the limit is killed (reported `outOfMemoryKilled`) or
 * refused, while one of a quarter succeeds. CPUs: the sandbox's cgroup quota (`cpu.max`) equals the request, or
 * `nproc` is at most the request rounded up. Pids: a fork loop stops before the limit and gets past half of it.
 */
function registerLimitMeasurements(harness: ContractHarness, limits: ResourceLimits): void {
  const { contractTest } = harness;

  if (limits.memoryMiB !== undefined) {
    const memoryMiB = limits.memoryMiB;
    contractTest(
      "limits.memory-measured",
      "an allocation past the memory limit is killed (outOfMemoryKilled not false) or refused; one well under it succeeds",
      async () => {
        await using sandbox = await harness.createSandbox({ limits });
        const underMiB = Math.max(1, Math.floor(memoryMiB / 4));
        const under = await sandbox.commands.run(`dd if=/dev/zero of=/dev/null bs=${underMiB}M count=1 2>/dev/null && echo allocated`);
        expect(
          { exitCode: under.exitCode, stdout: under.stdout, stderr: under.stderr },
          `a ${underMiB} MiB allocation under the ${memoryMiB} MiB limit`,
        ).toEqual({ exitCode: 0, stdout: "allocated\n", stderr: "" });
        // dd fills its whole block buffer from /dev/zero, so every page of it is touched.
        const overMiB = memoryMiB * 2;
        const over = await sandbox.commands.run(`dd if=/dev/zero of=/dev/null bs=${overMiB}M count=1 && echo allocated`);
        const observed = {
          exitCode: over.exitCode,
          outOfMemoryKilled: over.outOfMemoryKilled,
          stdout: over.stdout,
          stderr: over.stderr.slice(0, 300),
        };
        expect(over.stdout, `a ${overMiB} MiB allocation past the ${memoryMiB} MiB limit succeeded: ${JSON.stringify(observed)}`).toBe("");
        expect(over.exitCode, `a ${overMiB} MiB allocation past the limit exited 0: ${JSON.stringify(observed)}`).not.toBe(0);
        const refused = /memory|cannot allocate/i.test(over.stderr);
        // The OOM killer names no victim to the host (ADR 0030): a command it may have ended reads `null` (unknown), never
        // `false`, which says the OOM killer ended nothing while the command ran.
        expect(
          over.outOfMemoryKilled !== false || refused,
          `the allocation past the limit was reported as not out-of-memory (outOfMemoryKilled: false) and not refused with a memory error: ${JSON.stringify(observed)}`,
        ).toBe(true);
      },
    );
  }

  if (limits.cpus !== undefined) {
    const cpus = limits.cpus;
    contractTest(
      "limits.cpus-measured",
      "the sandbox's CPU quota (cgroup cpu.max) equals the request, or nproc is at most the request rounded up",
      async () => {
        await using sandbox = await harness.createSandbox({ limits });
        const result = await sandbox.commands.run(CPU_LIMIT_COMMAND);
        const measured = parseCpuLimit(result.stdout);
        const observed = `${JSON.stringify(measured)} from ${JSON.stringify(result.stdout)} (stderr ${JSON.stringify(result.stderr)})`;
        if (typeof measured.cgroupCpus === "number") {
          expect(measured.cgroupCpus, `CPUs allowed by the cgroup quota, wanted ${cpus}: ${observed}`).toBeCloseTo(cpus, 2);
          return;
        }
        expect(measured.nproc, `no cgroup CPU quota is set (${observed}); nproc must then show at most ${Math.ceil(cpus)} CPUs`).toBeLessThanOrEqual(
          Math.ceil(cpus),
        );
      },
    );
  }

  if (limits.pids !== undefined) {
    const pids = limits.pids;
    contractTest("limits.pids-measured", "a fork loop stops before the pids limit (and gets past half of it)", async () => {
      await using sandbox = await harness.createSandbox({ limits });
      const attempts = pids * 3;
      const result = await sandbox.commands.run(forkLoopCommand(attempts), { timeoutMs: 120_000 });
      const started = Number(/^started (\d+)$/m.exec(result.stdout)?.[1] ?? Number.NaN);
      const observed = `started ${started} of ${attempts} processes (exit ${result.exitCode}, stdout ${JSON.stringify(result.stdout)}, stderr ${JSON.stringify(result.stderr.slice(0, 300))})`;
      expect(started, `processes a fork loop started under a ${pids}-process limit: ${observed}`).toBeLessThan(pids);
      expect(started, `the fork loop stopped far below the ${pids}-process limit: ${observed}`).toBeGreaterThan(pids / 2);
    });
  }
}

/** Registers the reconnect tests (`RECONNECT`), or their refusal when it is off. */
export function registerReconnectTests(harness: ContractHarness): void {
  const { contractTest, capabilities, provider, options } = harness;

  if (!capabilities.RECONNECT) {
    contractTest("reconnect.refused", "connectSandbox() raises SBX_CAPABILITY_NOT_SUPPORTED when RECONNECT is off", async () => {
      await expectCapabilityRefused(harness, () => connectSandbox(provider, "sbx-contract-any-id", options.createOptions), "RECONNECT");
      expect(provider.connect).toBeUndefined();
    });
    return;
  }

  contractTest("reconnect.sees-files", "connectSandbox(provider, id) attaches to the live sandbox and sees its files", async () => {
    await using first = await harness.createSandbox();
    await first.files.write("left-by-first.txt", "still here");
    await using second = await connectSandbox(provider, first.id, options.createOptions);
    expect(second.id).toBe(first.id);
    expect(await second.files.read("left-by-first.txt")).toBe("still here");
    expect((await second.commands.run("cat left-by-first.txt")).stdout).toBe("still here");
  });
}

/** The mounts group on its own. */
export function describeMountsContract(name: string, factory: SandboxProviderFactoryForContract, options?: SandboxContractOptions): void {
  describeGroup("mounts", name, factory, options, registerMountsTests);
}

/** The resource limits group on its own. */
export function describeLimitsContract(name: string, factory: SandboxProviderFactoryForContract, options?: SandboxContractOptions): void {
  describeGroup("limits", name, factory, options, registerLimitsTests);
}

/** The reconnect group on its own. */
export function describeReconnectContract(name: string, factory: SandboxProviderFactoryForContract, options?: SandboxContractOptions): void {
  describeGroup("reconnect", name, factory, options, registerReconnectTests);
}
