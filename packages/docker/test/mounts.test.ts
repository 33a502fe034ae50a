import { execFileSync } from "node:child_process";
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { createTestSandbox, describeWithDocker } from "./docker-test-environment.js";

describeWithDocker("a git worktree mounted from the host", () => {
  let root: string;
  let worktree: string;
  beforeAll(() => {
    root = mkdtempSync(join(tmpdir(), "sbx-worktree-"));
    const repository = join(root, "repo");
    worktree = join(root, "feature");
    const git = (...args: string[]) =>
      execFileSync("git", args, {
        cwd: root,
        stdio: "pipe",
        env: { ...process.env, GIT_AUTHOR_NAME: "t", GIT_AUTHOR_EMAIL: "t@t", GIT_COMMITTER_NAME: "t", GIT_COMMITTER_EMAIL: "t@t" },
      });
    git("init", "-q", repository);
    writeFileSync(join(repository, "README.md"), "hello from the repo\n");
    git("-C", repository, "add", "README.md");
    git("-C", repository, "commit", "-q", "-m", "first");
    git("-C", repository, "worktree", "add", "-q", "-b", "feature", worktree);
    // The sandbox user is uid 10001: let it write into the worktree, as a caller would (chown or ACLs).
    chmodSync(worktree, 0o777);
  });
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  it("is visible and writable, and writes reach the host", async () => {
    await using sandbox = await createTestSandbox({ mounts: [{ hostPath: worktree, sandboxPath: "/workspace/repo" }] });
    expect(await sandbox.files.read("repo/README.md")).toBe("hello from the repo\n");
    const result = await sandbox.commands.run("cat .git && echo change > from-sandbox.txt", { cwd: "repo" });
    expect(result.exitCode).toBe(0);
    expect(result.stdout).toMatch(/^gitdir: /);
    expect(readFileSync(join(worktree, "from-sandbox.txt"), "utf8")).toBe("change\n");
    await sandbox.files.write("repo/via-files.txt", "archive api");
    expect(readFileSync(join(worktree, "via-files.txt"), "utf8")).toBe("archive api");
    expect(sandbox.audit().policies.mounts.applied).toEqual([{ hostPath: worktree, sandboxPath: "/workspace/repo", readOnly: false }]);
  });

  it("is read-only when asked: commands and the files API cannot write", async () => {
    await using sandbox = await createTestSandbox({ mounts: [{ hostPath: worktree, sandboxPath: "/workspace/repo", readOnly: true }] });
    expect((await sandbox.commands.run("cat repo/README.md")).stdout).toBe("hello from the repo\n");
    const write = await sandbox.commands.run("echo nope > repo/nope.txt");
    expect(write.exitCode).not.toBe(0);
    expect(write.stderr).toMatch(/Read-only file system/);
    // One error for a read-only mount through the files API, on every backend (ADR 0020).
    await expect(sandbox.files.write("repo/nope2.txt", "x")).rejects.toMatchObject({ code: "SBX_PATH", reason: "read-only" });
    expect(sandbox.audit().policies.mounts.applied).toEqual([{ hostPath: worktree, sandboxPath: "/workspace/repo", readOnly: true }]);
  });
});
