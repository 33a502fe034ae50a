import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DEFAULT_READ_LIMIT_BYTES, type Sandbox } from "@sbx/core";
import { expect } from "vitest";
import {
  describeGroup,
  expectSbxError,
  type ContractHarness,
  type SandboxContractOptions,
  type SandboxProviderFactoryForContract,
} from "../harness.js";

const SPARSE_BYTES = 2 * 1024 * 1024 * 1024;

/**
 * Makes a file far larger than the read limit: a real 2 GiB sparse file (`truncate -s 2G`) where the backend has
 * `truncate`; otherwise (an in-memory filesystem) a real file of `fallbackBytes`, read under a limit below it.
 */
async function oversizedFile(sandbox: Sandbox, name: string): Promise<{ path: string; sizeBytes: number; limitBytes: number | undefined }> {
  const sparse = await sandbox.commands.run(`command -v truncate >/dev/null 2>&1 && truncate -s 2G ${name} && echo made || echo no-truncate`);
  if (sparse.stdout.trim() === "made") return { path: name, sizeBytes: SPARSE_BYTES, limitBytes: undefined };
  const fallbackBytes = 256 * 1024;
  await sandbox.files.write(name, new Uint8Array(fallbackBytes));
  return { path: name, sizeBytes: fallbackBytes, limitBytes: 64 * 1024 };
}

/** Registers the read-limit tests: whole-file reads refuse past a limit; streams and downloads stay bounded. */
export function registerReadLimitsTests(harness: ContractHarness): void {
  const { contractTest } = harness;

  contractTest(
    "read-limits.whole-read-refused",
    "reading a 2 GiB sparse file whole is refused with FileTooLargeError naming the size and maxBytes",
    async () => {
      await using sandbox = await harness.createSandbox();
      const file = await oversizedFile(sandbox, "big");
      for (const format of ["text", "bytes"] as const) {
        const error = (await expectSbxError(
          () => sandbox.files.read(file.path, { format, maxBytes: file.limitBytes } as { format: "bytes" }),
          "SBX_FILE_TOO_LARGE",
        )) as unknown as { sizeBytes: number; limitBytes: number; option: string; message: string };
        expect(error.sizeBytes).toBe(file.sizeBytes);
        expect(error.limitBytes).toBe(file.limitBytes ?? DEFAULT_READ_LIMIT_BYTES);
        expect(error.option).toBe("maxBytes");
        expect(error.message).toContain(String(file.sizeBytes));
        expect(error.message).toContain("maxBytes");
      }
      // Under the limit the same call works, and the sandbox is still usable.
      await sandbox.files.write("small.txt", "fits");
      expect(await sandbox.files.read("small.txt", { maxBytes: 4 })).toBe("fits");
      await expectSbxError(() => sandbox.files.read("small.txt", { maxBytes: 3 }), "SBX_FILE_TOO_LARGE");
    },
  );

  contractTest(
    "read-limits.stream-limit",
    "a stream read with maxBytes errors with FileTooLargeError once past it, without holding the file",
    async () => {
      await using sandbox = await harness.createSandbox();
      const file = await oversizedFile(sandbox, "big");
      const limit = 1024 * 1024;
      const stream = await sandbox.files.read(file.path, { format: "stream", maxBytes: Math.min(limit, file.limitBytes ?? limit) });
      let received = 0;
      const reader = stream.getReader();
      const failure = await (async () => {
        try {
          for (;;) {
            const { value, done } = await reader.read();
            if (done) return undefined;
            received += value.byteLength;
          }
        } catch (error) {
          return error as { code?: string };
        }
      })();
      expect(failure?.code).toBe("SBX_FILE_TOO_LARGE");
      expect(received).toBeLessThanOrEqual(Math.min(limit, file.limitBytes ?? limit));
    },
  );

  contractTest("read-limits.download-limit", "a download with maxBytes is refused and leaves no host file", async () => {
    await using sandbox = await harness.createSandbox();
    const file = await oversizedFile(sandbox, "big");
    const directory = mkdtempSync(join(tmpdir(), "sbx-contract-download-"));
    try {
      const hostPath = join(directory, "big");
      const limit = Math.min(1024 * 1024, file.limitBytes ?? Number.MAX_SAFE_INTEGER);
      const error = (await expectSbxError(
        () => sandbox.files.download(file.path, hostPath, { maxBytes: limit }),
        "SBX_FILE_TOO_LARGE",
      )) as unknown as { sizeBytes: number };
      expect(error.sizeBytes).toBe(file.sizeBytes);
      expect(existsSync(hostPath), `the refused download left ${hostPath} on the host`).toBe(false);
    } finally {
      rmSync(directory, { recursive: true, force: true });
    }
  });
}

/** The read-limits group on its own. */
export function describeReadLimitsContract(name: string, factory: SandboxProviderFactoryForContract, options?: SandboxContractOptions): void {
  describeGroup("read limits", name, factory, options, registerReadLimitsTests);
}
