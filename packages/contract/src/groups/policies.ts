import { chmod, mkdtemp, readFile, readdir, rm, writeFile, access } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { connectSandbox, createSandbox } from "@sbx/core";
import { expect } from "vitest";
import { expectPathError } from "./file-policy.js";
import { countingProvider, describeGroup, expectCapabilityRefused, expectSbxError, mergeCreateOptions, type ContractHarness, type SandboxContractOptions, type SandboxProviderFactoryForContract } from "../harness.js";

async function hostExists(path: string): Promise<boolean> {
  return access(path).then(() => true, () => false);
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
      await expectCapabilityRefused(harness, () => createSandbox(counting.provider, mergeCreateOptions(options.createOptions, { mounts: [{ hostPath: tmpdir(), sandboxPath: mountPath, readOnly: true }] })), "HOST_MOUNTS");
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

  contractTest("mounts.read-only-files-api", "writes to a read-only mount through the files API are PathError read-only (write, mkdir, remove, rename) and change nothing on the host", async () => {
    const hostFolder = await mkdtemp(join(tmpdir(), "sbx-contract-mount-"));
    try {
      await fillWritableForEveryone(hostFolder);
      // The files API is confined to the workspace, so the mount goes inside it: learn where the workspace is first.
      let workspace: string;
      {
        await using probe = await harness.createSandbox();
        workspace = probe.workspace;
      }
      await using sandbox = await harness.createSandbox({ mounts: [{ hostPath: hostFolder, sandboxPath: `${workspace}/read-only`, readOnly: true }] });
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
  });

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
      await expectCapabilityRefused(harness, () => createSandbox(counting.provider, mergeCreateOptions(options.createOptions, { limits })), "RESOURCE_LIMITS");
      expect(counting.creates()).toBe(0);
    });
    return;
  }

  contractTest("limits.applied", "each requested limit is applied with exactly the requested value (read back); limits the backend lacks are refused", async () => {
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
      await expectSbxError(() => createSandbox(harness.provider, mergeCreateOptions(options.createOptions, { limits: { ...limits, [key]: value } })), "SBX_CAPABILITY_NOT_SUPPORTED");
    }
  });
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
