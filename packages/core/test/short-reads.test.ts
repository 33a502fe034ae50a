import { caught } from "./support/caught.ts";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type SandboxDriverV1, type SpawnRequest, posixReadFile } from "../src/adapter.ts";
import { createHostProcessDriver } from "./support/host-process-driver.ts";
import { sandboxOverAgentDriver } from "./support/host-agent-sandbox.ts";

const FILE_BYTES = 1024 * 1024;
const DELIVERED_BYTES = 300 * 1024;
/** What of the delivered output is the file's: the read script's size line (`1048576\n`) comes first. */
const DELIVERED_FILE_BYTES = DELIVERED_BYTES - `${FILE_BYTES}\n`.length;

/**
 * A host-process driver whose channel delivers only the first `DELIVERED_BYTES` of a command's stdout and then reports
 * exit 0, as a backend that stops waiting for output after the process exited (the Modal adapter's old 1 s grace) does.
 * Its reads are core's read script over `spawn` (`posixReadFile`), as the Modal adapter's are.
 */
function driverThatEndsReadsEarly(workspace: string): SandboxDriverV1 {
  const driver = createHostProcessDriver(workspace);
  const cutting: SandboxDriverV1 = {
    ...driver,
    readFile: (path, options) => posixReadFile(cutting, path, options),
    async spawn(request: SpawnRequest) {
      let delivered = 0;
      return driver.spawn({
        ...request,
        onStdout: (chunk) => {
          const room = DELIVERED_BYTES - delivered;
          if (room <= 0) return;
          const kept = chunk.subarray(0, room);
          delivered += kept.byteLength;
          request.onStdout(kept);
        },
      });
    },
  };
  return cutting;
}

describe("a read that ends before the file's end is an error, never a short result", () => {
  let workspace: string;
  beforeAll(async () => {
    workspace = await mkdtemp(join(tmpdir(), "sbx-short-read-"));
    await writeFile(join(workspace, "large.bin"), Buffer.alloc(FILE_BYTES, 7));
    await writeFile(join(workspace, "small.txt"), "hello\n");
    await writeFile(join(workspace, "empty.txt"), "");
  });
  afterAll(async () => {
    await rm(workspace, { recursive: true, force: true });
  });

  it("a whole-file read cut by the channel rejects with a retryable ProviderError naming both sizes", async () => {
    const sandbox = sandboxOverAgentDriver(driverThatEndsReadsEarly(workspace));
    const error = await caught(() => sandbox.files.read("large.bin", { format: "bytes" }));
    expect(error.code).toBe("SBX_PROVIDER");
    expect(error.retryable).toBe(true);
    expect(error.message).toContain(`${FILE_BYTES} bytes when the read began and ${DELIVERED_FILE_BYTES} bytes arrived`);
  });

  it("a streamed read cut by the channel errors the stream after the bytes that did arrive", async () => {
    const sandbox = sandboxOverAgentDriver(driverThatEndsReadsEarly(workspace));
    const stream = await sandbox.files.read("large.bin", { format: "stream" });
    let received = 0;
    const error = await caught(async () => {
      const reader = stream.getReader();
      for (;;) {
        const next = await reader.read();
        if (next.done) break;
        received += next.value.byteLength;
      }
    });
    expect(received).toBe(DELIVERED_FILE_BYTES);
    expect(error.code).toBe("SBX_PROVIDER");
    expect(error.retryable).toBe(true);
  });

  it("complete reads are unchanged: the size header never reaches the caller", async () => {
    const sandbox = sandboxOverAgentDriver(createSpawnOnlyDriver(workspace));
    expect(await sandbox.files.read("small.txt")).toBe("hello\n");
    expect(await sandbox.files.read("empty.txt")).toBe("");
    const bytes = await sandbox.files.read("large.bin", { format: "bytes" });
    expect(bytes.byteLength).toBe(FILE_BYTES);
    expect(bytes.every((byte) => byte === 7)).toBe(true);
  });
});

/** The host-process driver reading through core's read script over its `spawn`. */
function createSpawnOnlyDriver(workspace: string): SandboxDriverV1 {
  const driver = createHostProcessDriver(workspace);
  const reading: SandboxDriverV1 = { ...driver, readFile: (path, options) => posixReadFile(reading, path, options) };
  return reading;
}
