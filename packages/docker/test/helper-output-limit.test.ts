import { isSbxError } from "@sbx/core";
import { expect, it } from "vitest";
import { runArgv } from "../src/exec-process.js";
import { dockerContainer, HELPER_OUTPUT_LIMIT_BYTES, HelperOutputTooLargeError } from "../src/index.js";
import { fileHelperOperations } from "../src/file-helper.js";
import { createTestSandbox, describeWithDocker } from "./docker-test-environment.js";

/** 400 files with 200-byte names: a listing of about 80 KiB, over the 64 KiB limit these tests inject. */
const FILE_COUNT = 400;
const LIMIT_BYTES = 64 * 1024;

describeWithDocker("Docker helper execs: output past the limit is an error, never a cut answer", () => {
  it("files.list of a directory whose listing is over the helper limit fails naming the limit; under it the listing is whole", async () => {
    await using sandbox = await createTestSandbox();
    const made = await sandbox.commands.run(
      `python3 -c 'import os
os.makedirs("/workspace/many")
for index in range(${FILE_COUNT}):
    open("/workspace/many/%05d-%s" % (index, "x" * 194), "w").close()
print(len(os.listdir("/workspace/many")))'`,
      { timeoutMs: 60_000 },
    );
    expect(made.stdout.trim()).toBe(String(FILE_COUNT));
    const container = dockerContainer(sandbox);
    const limited = fileHelperOperations(container, { user: "10001:10001", workspace: "/workspace", maxOutputBytes: LIMIT_BYTES });
    const failure = await limited.list("/workspace/many", {}).then(
      (entries) => ({ entries: entries.length }),
      (error: unknown) => error,
    );
    expect(failure).toBeInstanceOf(HelperOutputTooLargeError);
    expect(isSbxError(failure, "SBX_PROVIDER")).toBe(true);
    expect(failure).toMatchObject({ limitBytes: LIMIT_BYTES, retryable: false });
    expect((failure as Error).message).toContain(`more than ${LIMIT_BYTES} bytes`);
    // With the default limit (64 MiB) the same directory lists whole, through the public API.
    expect((await sandbox.files.list("/workspace/many")).length).toBe(FILE_COUNT);
  }, 120_000);

  it("runArgv: `ls` of the same kind of directory past the limit rejects; exactly at the limit it resolves whole", async () => {
    await using sandbox = await createTestSandbox();
    const container = dockerContainer(sandbox);
    await sandbox.commands.run("mkdir /workspace/d && cd /workspace/d && for i in $(seq 1 100); do : > \"$(printf '%099d' $i)\"; done", {
      timeoutMs: 60_000,
    });
    // 100 names of 99 bytes plus a newline each: exactly 10,000 bytes.
    const whole = await runArgv(container, ["ls", "-1", "/workspace/d"], { user: "10001:10001", maxOutputBytes: 10_000 });
    expect(whole.stdout.byteLength).toBe(10_000);
    await expect(runArgv(container, ["ls", "-1", "/workspace/d"], { user: "10001:10001", maxOutputBytes: 9_999 })).rejects.toMatchObject({
      code: "SBX_PROVIDER",
      limitBytes: 9_999,
    });
  }, 120_000);

  it("the default limit is 64 MiB, measured: one byte over it rejects, exactly 64 MiB resolves whole", async () => {
    await using sandbox = await createTestSandbox();
    const container = dockerContainer(sandbox);
    expect(HELPER_OUTPUT_LIMIT_BYTES).toBe(64 * 1024 * 1024);
    await expect(
      runArgv(container, ["head", "-c", String(HELPER_OUTPUT_LIMIT_BYTES + 1), "/dev/zero"], { user: "10001:10001" }),
    ).rejects.toMatchObject({ code: "SBX_PROVIDER", limitBytes: HELPER_OUTPUT_LIMIT_BYTES });
    const whole = await runArgv(container, ["head", "-c", String(HELPER_OUTPUT_LIMIT_BYTES), "/dev/zero"], { user: "10001:10001" });
    expect([whole.exitCode, whole.stdout.byteLength]).toEqual([0, HELPER_OUTPUT_LIMIT_BYTES]);
  }, 120_000);
});
