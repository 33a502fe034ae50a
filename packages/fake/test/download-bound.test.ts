import { mkdtemp, readdir, rm, truncate, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createSandbox, DEFAULT_DOWNLOAD_LIMIT_BYTES, FileTooLargeError } from "@sbx/core";
import { expect, it } from "vitest";
import { createSandboxProvider } from "../src/index.js";

/**
 * `files.download` is bounded by default on the fake too (ADR 0028): a sparse 3 GiB file in the sandbox (the fake's
 * shell has no `truncate`, so it reaches the sandbox through a mount, as a file the sandbox got for nothing) is
 * refused with `FileTooLargeError` naming its size and the option, and nothing reaches the destination folder.
 */
it("the fake refuses to download a sparse 3 GiB file without maxBytes and leaves nothing on the host", async () => {
  const sparseBytes = 3 * 1024 * 1024 * 1024;
  const source = await mkdtemp(join(tmpdir(), "sbx-fake-sparse-"));
  const destination = await mkdtemp(join(tmpdir(), "sbx-fake-download-"));
  try {
    await writeFile(join(source, "sparse.bin"), "");
    await truncate(join(source, "sparse.bin"), sparseBytes);
    await using sandbox = await createSandbox(createSandboxProvider(), {
      mounts: [{ hostPath: source, sandboxPath: "/workspace/data", readOnly: true }],
    });
    expect((await sandbox.files.stat("data/sparse.bin")).size).toBe(sparseBytes);
    const error = await sandbox.files.download("data/sparse.bin", join(destination, "sparse.out")).then(
      () => undefined,
      (caught: unknown) => caught,
    );
    expect(error).toBeInstanceOf(FileTooLargeError);
    expect(error).toMatchObject({ code: "SBX_FILE_TOO_LARGE", sizeBytes: sparseBytes, limitBytes: DEFAULT_DOWNLOAD_LIMIT_BYTES, option: "maxBytes" });
    expect(await readdir(destination)).toEqual([]);
  } finally {
    await rm(source, { recursive: true, force: true });
    await rm(destination, { recursive: true, force: true });
  }
});
