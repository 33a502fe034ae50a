import { expect, it } from "vitest";
import { createTestSandbox, describeWithDocker } from "./docker-test-environment.js";

/** Finding 7 of issue 7: runCode killed by the OOM killer must not look like a success. */
describeWithDocker("runCode under the OOM killer", () => {
  it("code that allocates past limits.memoryMiB reports outOfMemoryKilled and an OutOfMemoryError, and the sandbox stays usable", async () => {
    await using sandbox = await createTestSandbox({ limits: { memoryMiB: 64 }, metadata: { test: "run-code-oom" } });
    const execution = await sandbox.runCode("chunks = []\nwhile True:\n    chunks.append(bytearray(16 * 1024 * 1024))\n");
    expect(execution.outOfMemoryKilled).toBe(true);
    expect(execution.error?.name).toBe("OutOfMemoryError");
    expect(execution.error?.value).toContain("limits.memoryMiB: 64");
    const after = await sandbox.runCode("print(6 * 7)");
    expect(after.stdout).toBe("42\n");
    expect(after.error).toBeNull();
    expect(after.outOfMemoryKilled).toBe(false);
  });
});
