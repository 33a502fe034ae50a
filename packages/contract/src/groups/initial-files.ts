import { createSandbox, MAX_INITIAL_FILES, MAX_INITIAL_FILES_BYTES, type CreateSandboxOptions, type SbxErrorCode } from "@sbx/core";
import { expect } from "vitest";
import {
  countingProvider,
  describeGroup,
  expectSbxError,
  mergeCreateOptions,
  type ContractHarness,
  type SandboxContractOptions,
  type SandboxProviderFactoryForContract,
} from "../harness.js";
import { expectPathError } from "./file-policy.js";

/**
 * `createSandbox({ files })` (ADR 0046): the files are in the sandbox when it resolves, seen from inside by a command;
 * a write that fails destroys the sandbox (asked of the backend) and rejects with that write's typed error; the
 * bounds refuse before the backend is touched.
 */
export function registerInitialFilesTests(harness: ContractHarness): void {
  const { contractTest, provider } = harness;

  contractTest(
    "initial-files.written-at-create",
    "files given to createSandbox are in the sandbox when it resolves: text, bytes, nested and unicode paths, seen by a command",
    async () => {
      const bytes = new Uint8Array(256);
      for (let index = 0; index < bytes.length; index++) bytes[index] = index;
      await using sandbox = await harness.createSandbox({
        files: [
          { path: "main.sh", content: "echo from-initial-file\n" },
          { path: "data/deep/bytes.bin", content: bytes },
          { path: "données/ünïcødé-文件.txt", content: "contenu €" },
          { path: "empty.txt", content: "" },
        ],
      });
      const seen = await sandbox.commands.run("sh main.sh && cat 'données/ünïcødé-文件.txt' && cat empty.txt && ls data/deep");
      expect(seen).toMatchObject({ exitCode: 0, stdout: "from-initial-file\ncontenu €bytes.bin\n" });
      expect([...(await sandbox.files.read("data/deep/bytes.bin", { format: "bytes" }))]).toEqual([...bytes]);
      expect(await sandbox.files.read("empty.txt")).toBe("");
      expect((await sandbox.files.stat("data/deep/bytes.bin")).size).toBe(256);
    },
  );

  contractTest(
    "initial-files.refused",
    "a failed initial write destroys the sandbox and rejects with its typed error; over-limit files are refused before the backend is touched",
    async () => {
      const sandboxExists = harness.options.sandboxExists;
      if (!sandboxExists)
        expect.fail(
          "initial-files.refused needs the sandboxExists(id) option, to ask the backend whether a refused create left its sandbox behind; wire it, or skip this test with a reason",
        );
      const counting = countingProvider(provider);
      const create = (extra: CreateSandboxOptions) => createSandbox(counting.provider, mergeCreateOptions(harness.options.createOptions, extra));
      // Bounds and shape: refused before any backend call.
      await expectSbxError(
        () => create({ files: Array.from({ length: MAX_INITIAL_FILES + 1 }, (_, index) => ({ path: `f${index}`, content: "" })) }),
        "SBX_INVALID_ARGUMENT",
      );
      await expectSbxError(
        () => create({ files: [{ path: "big.bin", content: new Uint8Array(MAX_INITIAL_FILES_BYTES + 1) }] }),
        "SBX_INVALID_ARGUMENT",
      );
      await expectSbxError(
        () =>
          create({
            files: [
              { path: "twice.txt", content: "a" },
              { path: "twice.txt", content: "b" },
            ],
          }),
        "SBX_INVALID_ARGUMENT",
      );
      await expectSbxError(() => create({ files: [{ path: "nul\0.txt", content: "a" }] }), "SBX_INVALID_ARGUMENT");
      expect(counting.creates(), "backend creates made by createSandbox calls refused for their files").toBe(0);
      // Refused once the sandbox exists: a path out of the workspace, and a write the backend itself refuses (a file
      // stands where a folder is needed). Each sandbox is destroyed before the rejection.
      await expectPathError(
        () =>
          create({
            files: [
              { path: "kept.txt", content: "x" },
              { path: "../outside.txt", content: "x" },
            ],
          }),
        "escapes-workspace",
      );
      // The backend's own refusal is the one `files.write` gives on a live sandbox (core's helper: PathError
      // not-a-directory); the create rejects with that very code.
      const expected = await (async () => {
        await using live = await harness.createSandbox();
        await live.files.write("plain", "a file");
        // Awaited here: the sandbox is disposed when this block ends, which must be after the write's answer.
        return await live.files.write("plain/inner.txt", "x").then(
          () => "no error",
          (error: unknown) => String((error as { code?: unknown }).code),
        );
      })();
      expect(expected, "files.write under a file on a live sandbox").toMatch(/^SBX_/);
      await expectSbxError(
        () =>
          create({
            files: [
              { path: "plain", content: "a file" },
              { path: "plain/inner.txt", content: "x" },
            ],
          }),
        expected as SbxErrorCode,
      );
      expect(counting.creates(), "backend creates made by the two createSandbox calls refused after creation").toBe(2);
      for (const id of counting.createdIds())
        expect(await sandboxExists(id), `sandbox ${id} of a createSandbox call refused for its files still exists`).toBe(false);
    },
  );
}

/** The initial-files group on its own. */
export function describeInitialFilesContract(name: string, factory: SandboxProviderFactoryForContract, options?: SandboxContractOptions): void {
  describeGroup("initial files", name, factory, options, registerInitialFilesTests);
}
