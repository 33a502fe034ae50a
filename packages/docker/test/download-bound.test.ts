import { mkdtemp, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DEFAULT_DOWNLOAD_LIMIT_BYTES, FileTooLargeError, type Sandbox } from "@sbx/core";
import { afterAll, beforeAll, expect, it } from "vitest";
import { createTestSandbox, describeWithDocker } from "./docker-test-environment.js";

/**
 * `files.download` is bounded by default (ADR 0028): a sparse 3 GiB file, which costs the sandbox nothing, is
 * refused with `FileTooLargeError` naming its size and the option, and nothing reaches the host's disk.
 */
describeWithDocker("files.download: a default bound against a sparse file", () => {
  const sparseBytes = 3 * 1024 * 1024 * 1024;
  let sandbox: Sandbox;
  let hostDirectory: string;
  beforeAll(async () => {
    sandbox = await createTestSandbox();
    hostDirectory = await mkdtemp(join(tmpdir(), "sbx-docker-download-bound-"));
  });
  afterAll(async () => {
    await sandbox?.kill();
    await rm(hostDirectory, { recursive: true, force: true });
  });

  it("a sparse 3 GiB file made inside the sandbox is refused without maxBytes, and nothing is left on the host", async () => {
    const made = await sandbox.commands.run("truncate -s 3G sparse.bin && du -k sparse.bin | cut -f1");
    expect(made.exitCode).toBe(0);
    // The attack is free for the sandbox: the file has a size and next to no blocks.
    expect(Number(made.stdout.trim())).toBeLessThan(1024);
    const destination = join(hostDirectory, "sparse.out");
    const error = await sandbox.files.download("sparse.bin", destination).then(
      () => undefined,
      (caught: unknown) => caught,
    );
    expect(error).toBeInstanceOf(FileTooLargeError);
    expect(error).toMatchObject({ code: "SBX_FILE_TOO_LARGE", sizeBytes: sparseBytes, limitBytes: DEFAULT_DOWNLOAD_LIMIT_BYTES, option: "maxBytes" });
    expect((error as Error).message).toContain(String(sparseBytes));
    expect((error as Error).message).toContain("maxBytes");
    expect(await readdir(hostDirectory)).toEqual([]);
  });

  it("through a link (whose own size says nothing) the stream is cut at the limit and the partial host file removed", async () => {
    await sandbox.commands.run("truncate -s 3G sparse.bin && ln -sf sparse.bin sparse-link");
    const destination = join(hostDirectory, "link.out");
    const error = await sandbox.files.download("sparse-link", destination, { maxBytes: 4 * 1024 * 1024 }).then(
      () => undefined,
      (caught: unknown) => caught,
    );
    expect(error).toBeInstanceOf(FileTooLargeError);
    expect(error).toMatchObject({ limitBytes: 4 * 1024 * 1024, option: "maxBytes" });
    expect(await readdir(hostDirectory)).toEqual([]);
  });
});
