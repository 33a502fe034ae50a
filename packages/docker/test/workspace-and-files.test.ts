import { isSbxError, type Sandbox } from "@sbx/core";
import { afterAll, beforeAll, expect, it } from "vitest";
import { createTestSandbox, describeWithDocker } from "./docker-test-environment.js";

async function errorOf(promise: Promise<unknown>): Promise<Error & { code?: string; reason?: string }> {
  try {
    await promise;
  } catch (error) {
    return error as Error & { code?: string; reason?: string };
  }
  throw new Error("expected the call to fail");
}

describeWithDocker("a full workspace is ENOSPC, not the OOM killer", () => {
  let sandbox: Sandbox;
  beforeAll(async () => {
    sandbox = await createTestSandbox();
  });
  afterAll(async () => {
    await sandbox?.kill();
  });

  it("the default workspace fits inside the memory limit, and the audit says how big it is", async () => {
    const size = await sandbox.commands.run("df -P -k /workspace | awk 'NR==2 { print $2 }'");
    expect(Number(size.stdout.trim())).toBe(224 * 1024);
    expect(sandbox.audit().policies.rootFilesystem.requested).toMatchObject({ workspaceSizeMiB: 224, tmpSizeMiB: 64 });
  });

  it("filling the workspace gives ENOSPC, the sandbox stays usable, a failed upload leaves no partial file, and removing the file frees the space", async () => {
    const fill = await sandbox.commands.run("dd if=/dev/zero of=big bs=1M 2>&1; echo status=$?");
    expect(fill.stdout).toMatch(/No space left on device/);
    expect(fill.stdout).toMatch(/status=1/);
    expect(fill.outOfMemoryKilled).toBe(false);
    expect((await sandbox.commands.run("echo alive")).stdout).toBe("alive\n");
    expect((await sandbox.runCode("print(42)")).stdout).toBe("42\n");
    // A 100 MB upload into the full workspace fails with a typed error and leaves nothing behind.
    const upload = await errorOf(sandbox.files.write("upload.bin", new Uint8Array(100 * 1024 * 1024)));
    expect(upload.code).toBe("SBX_PROVIDER");
    expect(upload.message).toMatch(/no space left/i);
    expect((await sandbox.files.list(".")).map((entry) => entry.name)).toEqual(["big"]);
    await sandbox.files.remove("big");
    const free = await sandbox.commands.run("df -P -k /workspace | awk 'NR==2 { print $3 }'");
    expect(Number(free.stdout.trim())).toBeLessThan(1024);
    await sandbox.files.write("after.txt", "space again");
    expect(await sandbox.files.read("after.txt")).toBe("space again");
  });

  it("a workspace that does not fit in the memory limit is refused at create, naming the setting", async () => {
    const error = await errorOf(createTestSandbox({ limits: { memoryMiB: 256 } }, { workspaceSizeMiB: 1024 }));
    expect(error.code).toBe("SBX_INVALID_ARGUMENT");
    expect((error as unknown as { field: string }).field).toBe("settings.workspaceSizeMiB");
  });
});

describeWithDocker("files resolve symlinks inside the sandbox, as the sandbox user, confined to the workspace", () => {
  let sandbox: Sandbox;
  beforeAll(async () => {
    sandbox = await createTestSandbox();
  });
  afterAll(async () => {
    await sandbox?.kill();
  });

  it("ln -s /etc etc-dir: reading etc-dir/shadow (or passwd) is refused, writing and listing through it too", async () => {
    await sandbox.commands.run("ln -s /etc etc-dir && mkdir -p real && ln -s real inner");
    for (const path of ["etc-dir/shadow", "etc-dir/passwd"]) {
      const error = await errorOf(sandbox.files.read(path));
      expect(error.code).toBe("SBX_PATH");
      expect(error.reason).toBe("escapes-workspace");
    }
    expect((await errorOf(sandbox.files.write("etc-dir/planted", "x"))).reason).toBe("escapes-workspace");
    expect((await errorOf(sandbox.files.list("etc-dir"))).reason).toBe("escapes-workspace");
    expect((await errorOf(sandbox.files.stat("etc-dir/shadow"))).reason).toBe("escapes-workspace");
    expect((await errorOf(sandbox.files.mkdir("etc-dir/sub"))).reason).toBe("escapes-workspace");
    // A symlink that stays inside the workspace works, and the file belongs to the sandbox user.
    await sandbox.files.write("inner/note.txt", "inside");
    expect(await sandbox.files.read("inner/note.txt")).toBe("inside");
    expect((await sandbox.commands.run("stat -c %u real/note.txt")).stdout).toBe("10001\n");
  });

  it("very long names are a typed PathError, and no message carries a host-internal path", async () => {
    const long = "n".repeat(300);
    for (const call of [sandbox.files.write(long, "x"), sandbox.files.read(long), sandbox.files.mkdir(`${long}/x`), sandbox.files.stat(long)]) {
      const error = await errorOf(call);
      expect(error.code).toBe("SBX_PATH");
      expect(error.reason).toBe("invalid");
      expect(error.message).not.toMatch(/\/var\/lib\/docker|overlay2/);
    }
    const errors = await Promise.all(
      [
        sandbox.files.read("missing/file"),
        sandbox.files.write("etc-dir/x", "x"),
        sandbox.files.remove("nope"),
        sandbox.files.rename("nope", "other"),
      ].map((call) => errorOf(call)),
    );
    for (const error of errors) {
      expect(isSbxError(error)).toBe(true);
      expect(error.message).not.toMatch(/\/var\/lib\/docker|overlay2/);
    }
  });
});
