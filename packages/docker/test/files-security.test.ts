import { existsSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { isSbxError, type Sandbox } from "@sbx/core";
import { afterAll, beforeAll, expect, it } from "vitest";
import { createTestSandbox, describeWithDocker } from "./docker-test-environment.js";

describeWithDocker("files: malicious paths and symlinks against the real engine", () => {
  let sandbox: Sandbox;
  let hostDirectory: string;
  beforeAll(async () => {
    sandbox = await createTestSandbox();
    hostDirectory = await mkdtemp(join(tmpdir(), "sbx-docker-files-"));
  });
  afterAll(async () => {
    await sandbox?.kill();
    await rm(hostDirectory, { recursive: true, force: true });
  });

  const maliciousPaths = [
    "../x",
    "/etc/x",
    "a/../../x",
    "/workspace/../etc/passwd",
    "x\0y",
    "a/../../../../tmp/x",
    "/tmp/x",
    "/",
    "..",
    "a/" + "b".repeat(5000),
    "/proc/self/root/etc/passwd",
  ];
  for (const path of maliciousPaths) {
    it(`upload to ${JSON.stringify(path.slice(0, 40))} is refused before anything reaches Docker`, async () => {
      const error = await sandbox.files.write(path, "evil").catch((caught: unknown) => caught);
      expect(isSbxError(error), String(error)).toBe(true);
      expect(["SBX_PATH", "SBX_INVALID_ARGUMENT"]).toContain((error as { code: string }).code);
    });
  }

  it("downloading a symlink to a container file, to a host-looking path or to /dev/zero is refused (escapes-workspace, ADR 0020)", async () => {
    await sandbox.commands.run(
      "ln -s /etc/passwd passwd-link; ln -s " +
        JSON.stringify(join(hostDirectory, "marker")) +
        " host-link; ln -s /dev/zero zero-link; ln -s ../../etc rel-link",
    );
    for (const name of ["passwd-link", "host-link", "zero-link", "rel-link"]) {
      const target = join(hostDirectory, `${name}.out`);
      const error = await sandbox.files.download(name, target).catch((caught: unknown) => caught);
      expect(error, name).toMatchObject({ code: "SBX_PATH", reason: "escapes-workspace" });
      expect(existsSync(target), name).toBe(false);
      await expect(sandbox.files.read(name)).rejects.toMatchObject({ code: "SBX_PATH", reason: "escapes-workspace" });
    }
  });

  it("a FIFO and a directory are refused; a missing file is FileNotFoundError", async () => {
    await sandbox.commands.run("mkfifo pipe; mkdir -p folder");
    await expect(sandbox.files.read("pipe")).rejects.toMatchObject({ code: "SBX_PATH", reason: "not-a-regular-file" });
    await expect(sandbox.files.read("folder")).rejects.toMatchObject({ code: "SBX_PATH", reason: "is-a-directory" });
    await expect(sandbox.files.read("missing.txt")).rejects.toMatchObject({ code: "SBX_FILE_NOT_FOUND" });
    await expect(sandbox.files.stat("missing.txt")).rejects.toMatchObject({ code: "SBX_FILE_NOT_FOUND" });
    expect((await sandbox.files.stat("pipe")).type).toBe("other");
  });

  it("writing through a symlinked folder that points out of the workspace cannot change the container's files", async () => {
    await sandbox.commands.run("ln -s /etc etc-link");
    const error = await sandbox.files.write("etc-link/passwd", "root::0:0::/:/bin/sh\n").catch((caught: unknown) => caught);
    expect(isSbxError(error), String(error)).toBe(true);
    const passwd = await sandbox.commands.run("head -1 /etc/passwd");
    expect(passwd.stdout).toMatch(/^root:x:0:0/);
  });

  it("writing onto a directory is refused; writing over a file replaces it", async () => {
    await sandbox.commands.run("mkdir -p busy");
    await expect(sandbox.files.write("busy", "x")).rejects.toMatchObject({ code: "SBX_PATH" });
    await sandbox.files.write("replace.txt", "first version, longer");
    await sandbox.files.write("replace.txt", "second");
    expect(await sandbox.files.read("replace.txt")).toBe("second");
  });

  it("streams of unknown length larger than the in-memory threshold are spooled and arrive intact", async () => {
    const chunk = new Uint8Array(1024 * 1024).fill(65);
    async function* twelveMiB() {
      for (let index = 0; index < 12; index++) yield chunk;
    }
    await sandbox.files.write("spooled.bin", twelveMiB());
    expect((await sandbox.files.stat("spooled.bin")).size).toBe(12 * 1024 * 1024);
  });
});
