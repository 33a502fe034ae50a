import { createHash, randomBytes } from "node:crypto";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect } from "vitest";
import {
  describeGroup,
  expectSbxError,
  type ContractHarness,
  type SandboxContractOptions,
  type SandboxProviderFactoryForContract,
} from "../harness.js";

const MEBIBYTE = 1024 * 1024;

/** A stream of `totalBytes` random bytes in 1 MiB chunks, hashing them as they are produced. */
function randomStream(totalBytes: number): { stream: ReadableStream<Uint8Array>; digest: () => string } {
  const hash = createHash("sha256");
  let produced = 0;
  const stream = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (produced >= totalBytes) return controller.close();
      const chunk = new Uint8Array(randomBytes(Math.min(MEBIBYTE, totalBytes - produced)));
      hash.update(chunk);
      produced += chunk.byteLength;
      controller.enqueue(chunk);
    },
  });
  return { stream, digest: () => hash.digest("hex") };
}

/** Reads a stream to its end, hashing it; with `delayMsPerChunk`, waits that long after each chunk (a slow consumer). */
async function hashStream(stream: ReadableStream<Uint8Array>, options: { delayMsPerChunk?: number } = {}): Promise<{ digest: string; size: number }> {
  const hash = createHash("sha256");
  let size = 0;
  const reader = stream.getReader();
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    hash.update(value);
    size += value.byteLength;
    if (options.delayMsPerChunk) await new Promise((resolve) => setTimeout(resolve, options.delayMsPerChunk));
  }
  return { digest: hash.digest("hex"), size };
}

/** Registers the files tests. */
export function registerFilesTests(harness: ContractHarness): void {
  const { contractTest } = harness;

  contractTest("files.text-round-trip", "text written is read back, including non-ASCII text and an empty file", async () => {
    await using sandbox = await harness.createSandbox();
    const text = "hello sbx\nünïcødé 文件 €\n";
    await sandbox.files.write("greeting.txt", text);
    expect(await sandbox.files.read("greeting.txt")).toBe(text);
    await sandbox.files.write("greeting.txt", "replaced");
    expect(await sandbox.files.read("greeting.txt")).toBe("replaced");
    await sandbox.files.write("empty.txt", "");
    expect(await sandbox.files.read("empty.txt")).toBe("");
    expect(await sandbox.files.read(`${sandbox.workspace}/greeting.txt`)).toBe("replaced");
  });

  contractTest("files.binary-round-trip", "all 256 byte values survive a round trip", async () => {
    await using sandbox = await harness.createSandbox();
    const bytes = new Uint8Array(512);
    for (let index = 0; index < bytes.length; index++) bytes[index] = index % 256;
    await sandbox.files.write("bytes.bin", bytes);
    expect([...(await sandbox.files.read("bytes.bin", { format: "bytes" }))]).toEqual([...bytes]);
    expect((await sandbox.files.stat("bytes.bin")).size).toBe(512);
  });

  contractTest("files.large-stream-round-trip", "a large file streams in and out unchanged (sha256)", async () => {
    await using sandbox = await harness.createSandbox();
    const totalBytes = harness.options.largeFileBytes ?? 64 * MEBIBYTE;
    const source = randomStream(totalBytes);
    await sandbox.files.write("large.bin", source.stream);
    const readBack = await hashStream(await sandbox.files.read("large.bin", { format: "stream" }));
    expect(readBack.size).toBe(totalBytes);
    expect(readBack.digest).toBe(source.digest());
  });

  contractTest(
    "files.large-stream-slow-consumer",
    "a large file read by a slow consumer (2 ms a chunk) beside a fast one arrives whole to both, or the read fails",
    async () => {
      await using sandbox = await harness.createSandbox();
      const totalBytes = harness.options.largeFileBytes ?? 64 * MEBIBYTE;
      const source = randomStream(totalBytes);
      await sandbox.files.write("large.bin", source.stream);
      const expected = source.digest();
      // A consumer behind the producer (a slow link, a loaded host) must still get every byte: nothing cut by a timer
      // while the rest is in flight (ADR 0028). A second, fast read of the same file runs at once, as load.
      const [slow, fast] = await Promise.all([
        sandbox.files.read("large.bin", { format: "stream" }).then((stream) => hashStream(stream, { delayMsPerChunk: 2 })),
        sandbox.files.read("large.bin", { format: "stream" }).then((stream) => hashStream(stream)),
      ]);
      expect(slow, `the slow consumer received ${slow.size} of ${totalBytes} bytes`).toEqual({ size: totalBytes, digest: expected });
      expect(fast, `the fast consumer received ${fast.size} of ${totalBytes} bytes`).toEqual({ size: totalBytes, digest: expected });
    },
  );

  contractTest("files.unicode-names", "unicode folder and file names work for files and commands", async () => {
    await using sandbox = await harness.createSandbox();
    await sandbox.files.write("données/ünïcødé-文件.txt", "contenu");
    expect(await sandbox.files.read("données/ünïcødé-文件.txt")).toBe("contenu");
    const names = (await sandbox.files.list("données")).map((entry) => entry.name);
    expect(names).toEqual(["ünïcødé-文件.txt"]);
    const viaCommand = await sandbox.commands.run("cat 'données/ünïcødé-文件.txt'");
    expect(viaCommand.stdout).toBe("contenu");
  });

  contractTest("files.list-stat-exists", "list, stat and exists describe files and folders", async () => {
    await using sandbox = await harness.createSandbox();
    await sandbox.files.write("listing/a.txt", "aaa");
    await sandbox.files.write("listing/b.txt", "bbbbb");
    await sandbox.files.mkdir("listing/inner");
    const entries = await sandbox.files.list("listing");
    const byName = new Map(entries.map((entry) => [entry.name, entry]));
    expect([...byName.keys()].sort()).toEqual(["a.txt", "b.txt", "inner"]);
    expect(byName.get("a.txt")).toMatchObject({ type: "file", size: 3, path: `${sandbox.workspace}/listing/a.txt` });
    expect(byName.get("inner")?.type).toBe("directory");
    const stat = await sandbox.files.stat("listing/b.txt");
    expect(stat).toMatchObject({ name: "b.txt", type: "file", size: 5, path: `${sandbox.workspace}/listing/b.txt` });
    expect((await sandbox.files.stat("listing")).type).toBe("directory");
    expect(await sandbox.files.exists("listing/a.txt"), 'files.exists("listing/a.txt") for a written file').toBe(true);
    expect(await sandbox.files.exists("listing"), 'files.exists("listing") for a folder').toBe(true);
    expect(await sandbox.files.exists("listing/missing.txt"), 'files.exists("listing/missing.txt") for a file never written').toBe(false);
  });

  contractTest("files.mkdir", "mkdir creates parents and succeeds when the folder exists", async () => {
    await using sandbox = await harness.createSandbox();
    await sandbox.files.mkdir("deep/er/folder");
    await sandbox.files.mkdir("deep/er/folder");
    expect((await sandbox.files.stat("deep/er/folder")).type).toBe("directory");
    expect((await sandbox.commands.run("test -d deep/er/folder && echo is-dir")).stdout).toBe("is-dir\n");
  });

  contractTest("files.remove", "remove deletes files, and folders with recursive; missing is SBX_FILE_NOT_FOUND", async () => {
    await using sandbox = await harness.createSandbox();
    await sandbox.files.write("gone.txt", "x");
    await sandbox.files.remove("gone.txt");
    expect(await sandbox.files.exists("gone.txt"), 'files.exists("gone.txt") after files.remove').toBe(false);
    await sandbox.files.write("tree/leaf/file.txt", "x");
    await sandbox.files.remove("tree", { recursive: true });
    expect(await sandbox.files.exists("tree"), 'files.exists("tree") after a recursive files.remove').toBe(false);
    await expectSbxError(() => sandbox.files.remove("gone.txt"), "SBX_FILE_NOT_FOUND");
  });

  contractTest("files.rename", "rename moves files and folders", async () => {
    await using sandbox = await harness.createSandbox();
    await sandbox.files.write("before.txt", "moved");
    await sandbox.files.rename("before.txt", "after.txt");
    expect(await sandbox.files.exists("before.txt"), 'files.exists("before.txt") after renaming it').toBe(false);
    expect(await sandbox.files.read("after.txt")).toBe("moved");
    await sandbox.files.write("folder-a/inside.txt", "inside");
    await sandbox.files.rename("folder-a", "folder-b");
    expect(await sandbox.files.read("folder-b/inside.txt")).toBe("inside");
    expect(await sandbox.files.exists("folder-a"), 'files.exists("folder-a") after renaming the folder').toBe(false);
  });

  contractTest("files.missing", "reading or describing a missing file raises SBX_FILE_NOT_FOUND", async () => {
    await using sandbox = await harness.createSandbox();
    await expectSbxError(() => sandbox.files.read("missing.txt"), "SBX_FILE_NOT_FOUND");
    await expectSbxError(() => sandbox.files.read("missing.txt", { format: "bytes" }), "SBX_FILE_NOT_FOUND");
    await expectSbxError(() => sandbox.files.stat("missing/deeper.txt"), "SBX_FILE_NOT_FOUND");
    await expectSbxError(() => sandbox.files.list("missing-folder"), "SBX_FILE_NOT_FOUND");
  });

  contractTest("files.path-escapes", "paths escaping the workspace or containing NUL raise SBX_PATH", async () => {
    await using sandbox = await harness.createSandbox();
    for (const path of ["../x", "a/../../x", "/etc/passwd", "bad\0name.txt", "../../../../etc/passwd"]) {
      await expectSbxError(() => sandbox.files.read(path), "SBX_PATH");
      await expectSbxError(() => sandbox.files.write(path, "x"), "SBX_PATH");
    }
    await expectSbxError(() => sandbox.files.list("/etc"), "SBX_PATH");
    await expectSbxError(() => sandbox.files.rename("inside.txt", "../outside.txt"), "SBX_PATH");
  });

  contractTest("files.visible-to-commands", "a file written through the files API is visible to a command", async () => {
    await using sandbox = await harness.createSandbox();
    await sandbox.files.write("from-files.txt", "written by files.write");
    const result = await sandbox.commands.run("cat from-files.txt");
    expect(result.stdout).toBe("written by files.write");
  });

  contractTest("files.commands-visible-to-files", "a file a command writes is visible to the files API", async () => {
    await using sandbox = await harness.createSandbox();
    await sandbox.commands.run("mkdir -p made && printf 'written by a command' > made/by-command.txt");
    expect(await sandbox.files.read("made/by-command.txt")).toBe("written by a command");
    expect((await sandbox.files.list("made")).map((entry) => entry.name)).toEqual(["by-command.txt"]);
  });

  contractTest("files.upload-download", "upload copies a host file in and download copies it out", async () => {
    const hostFolder = await mkdtemp(join(tmpdir(), "sbx-contract-"));
    try {
      await using sandbox = await harness.createSandbox();
      const bytes = new Uint8Array(randomBytes(300_000));
      await writeFile(join(hostFolder, "in.bin"), bytes);
      await sandbox.files.upload(join(hostFolder, "in.bin"), "uploaded/in.bin");
      expect([...(await sandbox.files.read("uploaded/in.bin", { format: "bytes" }))].length).toBe(bytes.length);
      await sandbox.files.download("uploaded/in.bin", join(hostFolder, "out.bin"));
      expect(Buffer.compare(await readFile(join(hostFolder, "out.bin")), Buffer.from(bytes))).toBe(0);
      await expectSbxError(() => sandbox.files.upload(join(hostFolder, "does-not-exist"), "x.bin"), "SBX_INVALID_ARGUMENT");
      await expectSbxError(() => sandbox.files.download("missing.bin", join(hostFolder, "never.bin")), "SBX_FILE_NOT_FOUND");
    } finally {
      await rm(hostFolder, { recursive: true, force: true });
    }
  });
}

/** The files group on its own. */
export function describeFilesContract(name: string, factory: SandboxProviderFactoryForContract, options?: SandboxContractOptions): void {
  describeGroup("files", name, factory, options, registerFilesTests);
}
