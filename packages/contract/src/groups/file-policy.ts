import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathErrorReasonSchema, type PathErrorReason } from "@sbx/core";
import { expect } from "vitest";
import {
  describeGroup,
  expectSbxError,
  type ContractHarness,
  type SandboxContractOptions,
  type SandboxProviderFactoryForContract,
} from "../harness.js";

/** Asserts a call is refused with `PathError` of `reason`, a member of the closed, documented union. */
export async function expectPathError(work: () => Promise<unknown>, reason: PathErrorReason): Promise<void> {
  const error = (await expectSbxError(work, "SBX_PATH")) as unknown as { reason: string };
  expect(pathErrorReasonSchema.options).toContain(error.reason);
  expect(error.reason).toBe(reason);
}

/**
 * The file policy of ADR 0020, one rule per concern, the same on every backend: symbolic links inside the workspace
 * and leading out of it, special files given to `read`, listing order, `remove` of a folder without `recursive`.
 */
export function registerFilePolicyTests(harness: ContractHarness): void {
  const { contractTest } = harness;

  contractTest(
    "file-policy.symlink-inside",
    "a link inside the workspace: read and download follow it; stat, exists and list describe the link",
    async () => {
      await using sandbox = await harness.createSandbox();
      await sandbox.files.write("target.txt", "through the link");
      expect((await sandbox.commands.run("ln -s target.txt link.txt && mkdir -p folder && ln -s folder folder-link")).exitCode).toBe(0);
      expect(await sandbox.files.read("link.txt")).toBe("through the link");
      expect((await sandbox.files.stat("link.txt")).type).toBe("symlink");
      expect(await sandbox.files.exists("link.txt"), 'files.exists("link.txt") for a symlink inside the workspace').toBe(true);
      const listing = await sandbox.files.list(".");
      expect(listing.find((entry) => entry.name === "link.txt")?.type).toBe("symlink");
      await sandbox.files.write("folder-link/inner.txt", "inside");
      expect(await sandbox.files.read("folder/inner.txt")).toBe("inside");
      const hostFolder = await mkdtemp(join(tmpdir(), "sbx-contract-link-"));
      try {
        await sandbox.files.download("link.txt", join(hostFolder, "copy.txt"));
        expect(await readFile(join(hostFolder, "copy.txt"), "utf8")).toBe("through the link");
      } finally {
        await rm(hostFolder, { recursive: true, force: true });
      }
    },
  );

  contractTest(
    "file-policy.symlink-outside",
    "links leading out of the workspace: read, write, list, stat, exists and download through them are PathError escapes-workspace",
    async () => {
      await using sandbox = await harness.createSandbox();
      const outside = `/tmp/sbx-contract-outside-${Math.random().toString(36).slice(2)}`;
      const made = await sandbox.commands.run(
        `mkdir -p ${outside} && echo outside-secret > ${outside}/secret.txt && ln -s ${outside}/secret.txt file-out && ln -s ${outside} dir-out`,
      );
      expect(made.exitCode).toBe(0);
      await expectPathError(() => sandbox.files.read("file-out"), "escapes-workspace");
      await expectPathError(() => sandbox.files.read("dir-out/secret.txt"), "escapes-workspace");
      await expectPathError(() => sandbox.files.write("dir-out/planted.txt", "planted"), "escapes-workspace");
      await expectPathError(() => sandbox.files.list("dir-out"), "escapes-workspace");
      await expectPathError(() => sandbox.files.stat("dir-out/secret.txt"), "escapes-workspace");
      await expectPathError(() => sandbox.files.exists("dir-out/secret.txt"), "escapes-workspace");
      const hostFolder = await mkdtemp(join(tmpdir(), "sbx-contract-link-"));
      try {
        await expectPathError(() => sandbox.files.download("file-out", join(hostFolder, "copy.txt")), "escapes-workspace");
      } finally {
        await rm(hostFolder, { recursive: true, force: true });
      }
      // The link itself lives in the workspace: stat describes it without following it.
      expect((await sandbox.files.stat("file-out")).type).toBe("symlink");
      // Writing to a final link replaces the link; the file it pointed to is untouched.
      await sandbox.files.write("file-out", "replaced");
      expect((await sandbox.files.stat("file-out")).type).toBe("file");
      const check = await sandbox.commands.run(`cat ${outside}/secret.txt; ls ${outside}`);
      expect(check.stdout).toBe("outside-secret\nsecret.txt\n");
    },
  );

  contractTest(
    "file-policy.stat-follow",
    "stat with followSymlinks describes what a link inside leads to; a link out is PathError escapes-workspace, a link to nothing SBX_FILE_NOT_FOUND",
    async () => {
      await using sandbox = await harness.createSandbox();
      await sandbox.files.write("target.txt", "12345");
      const outside = `/tmp/sbx-contract-stat-out-${Math.random().toString(36).slice(2)}`;
      const made = await sandbox.commands.run(
        `mkdir -p folder ${outside} && echo outside-secret > ${outside}/secret.txt && ln -s target.txt file-link && ln -s folder folder-link && ` +
          `ln -s file-link chain && ln -s ${outside}/secret.txt out-link && ln -s ../.. up-link && ln -s missing.txt dangling && ln -s ${outside} out-folder`,
      );
      expect(made.exitCode).toBe(0);
      const follow = { followSymlinks: true };
      expect(await sandbox.files.stat("file-link", follow)).toMatchObject({
        name: "file-link",
        path: `${sandbox.workspace}/file-link`,
        type: "file",
        size: 5,
      });
      expect((await sandbox.files.stat("file-link")).type, "stat without followSymlinks describes the link itself").toBe("symlink");
      expect((await sandbox.files.stat("file-link", { followSymlinks: false })).type).toBe("symlink");
      expect((await sandbox.files.stat("folder-link", follow)).type).toBe("directory");
      expect(await sandbox.files.stat("chain", follow)).toMatchObject({ type: "file", size: 5 });
      expect((await sandbox.files.stat("target.txt", follow)).type, "a plain file is described as itself").toBe("file");
      await expectPathError(() => sandbox.files.stat("out-link", follow), "escapes-workspace");
      await expectPathError(() => sandbox.files.stat("out-folder", follow), "escapes-workspace");
      await expectPathError(() => sandbox.files.stat("up-link", follow), "escapes-workspace");
      await expectSbxError(() => sandbox.files.stat("dangling", follow), "SBX_FILE_NOT_FOUND");
      await expectSbxError(() => sandbox.files.stat("file-link", { followSymlinks: "yes" as unknown as boolean }), "SBX_INVALID_ARGUMENT");
    },
  );

  contractTest(
    "file-policy.read-special",
    "read of a directory is PathError is-a-directory; of a FIFO, PathError not-a-regular-file (without blocking)",
    async () => {
      await using sandbox = await harness.createSandbox();
      await sandbox.files.mkdir("a-folder");
      await expectPathError(() => sandbox.files.read("a-folder"), "is-a-directory");
      const fifo = await sandbox.commands.run("mkfifo a-fifo");
      if (fifo.exitCode === 0) await expectPathError(() => sandbox.files.read("a-fifo"), "not-a-regular-file");
    },
  );

  contractTest("file-policy.list-sorted", "list() is sorted by name, byte-wise, on every backend", async () => {
    await using sandbox = await harness.createSandbox();
    for (const name of ["b.txt", "a.txt", "C.txt", "_.txt", "a0.txt"]) await sandbox.files.write(`sorted/${name}`, name);
    expect((await sandbox.files.list("sorted")).map((entry) => entry.name)).toEqual(["C.txt", "_.txt", "a.txt", "a0.txt", "b.txt"]);
  });

  contractTest(
    "file-policy.remove-folder",
    "remove() of a folder without recursive is PathError is-a-directory and removes nothing; with recursive it is gone",
    async () => {
      await using sandbox = await harness.createSandbox();
      await sandbox.files.write("full/inner.txt", "kept");
      await expectPathError(() => sandbox.files.remove("full"), "is-a-directory");
      expect(await sandbox.files.read("full/inner.txt")).toBe("kept");
      await sandbox.files.remove("full", { recursive: true });
      expect(await sandbox.files.exists("full"), 'files.exists("full") after a recursive remove').toBe(false);
    },
  );

  contractTest("policy.missing-cwd", "a missing cwd is a command result (non-zero exit, the shell's message), not an sbx error", async () => {
    await using sandbox = await harness.createSandbox();
    const result = await sandbox.commands.run("echo never", { cwd: "no-such-folder" });
    expect(result.exitCode).not.toBe(0);
    expect(result.stdout).toBe("");
    expect(result.stderr.length).toBeGreaterThan(0);
  });

  contractTest(
    "policy.default-environment",
    "every command sees core's default HOME (the workspace) and LANG and a working PATH; the caller's env overrides them",
    async () => {
      await using sandbox = await harness.createSandbox();
      const defaults = await sandbox.commands.run('printf "%s|%s" "$HOME" "$LANG"');
      expect(defaults.stdout).toBe(`${sandbox.workspace}|C.UTF-8`);
      // PATH: core's default, except where the backend's process service sets its own (E2B's envd); it finds sh tools.
      expect((await sandbox.commands.run("command -v cat")).exitCode).toBe(0);
      const overridden = await sandbox.commands.run('printf "%s|%s" "$HOME" "$LANG"', { env: { HOME: "/tmp", LANG: "C" } });
      expect(overridden.stdout).toBe("/tmp|C");
    },
  );
}

/** The file-policy group on its own. */
export function describeFilePolicyContract(name: string, factory: SandboxProviderFactoryForContract, options?: SandboxContractOptions): void {
  describeGroup("file policy", name, factory, options, registerFilePolicyTests);
}
