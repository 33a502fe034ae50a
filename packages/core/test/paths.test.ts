import { describe, expect, it } from "vitest";
import { PathError } from "../src/index.ts";
import { resolveWorkingDirectory, resolveWorkspacePath } from "../src/adapter.ts";

const workspace = "/workspace";

function refusal(path: unknown): PathError {
  try {
    resolveWorkspacePath(path, workspace, "test");
  } catch (error) {
    expect(error).toBeInstanceOf(PathError);
    return error as PathError;
  }
  throw new Error(`expected ${JSON.stringify(path)} to be refused`);
}

describe("resolveWorkspacePath", () => {
  it.each([
    ["../x"],
    ["a/../../x"],
    ["a/.."],
    ["a/b/../c"],
    [".."],
    ["/etc/passwd"],
    ["/"],
    ["/workspace/../etc"],
    ["/workspace/.."],
    ["/workspacefoo/x"],
    ["/workspace-other"],
    ["//etc/passwd"],
  ])("refuses %j as escapes-workspace", (path) => {
    const error = refusal(path);
    expect(error.reason).toBe("escapes-workspace");
    expect(error.path).toBe(path);
    expect(error.backend).toBe("test");
  });

  it.each([[""], ["a\0b"], ["\0"], [`/workspace/x\0/../../etc`], [undefined], [null], [42], [{}]])("refuses %j as invalid", (path) => {
    expect(refusal(path).reason).toBe("invalid");
  });

  it("refuses a path longer than 4096 characters, without echoing all of it", () => {
    const error = refusal("a/".repeat(3000));
    expect(error.reason).toBe("invalid");
    expect(error.path.length).toBeLessThan(100);
    expect(error.message).toContain("4096");
  });

  it("accepts a path of exactly 4096 characters", () => {
    expect(resolveWorkspacePath("a".repeat(4096), workspace)).toBe(`${workspace}/${"a".repeat(4096)}`);
  });

  it.each([
    ["a.txt", "/workspace/a.txt"],
    ["./a//b/", "/workspace/a/b"],
    ["a/./b/./c", "/workspace/a/b/c"],
    ["/workspace/a", "/workspace/a"],
    ["/workspace//a/", "/workspace/a"],
    ["...", "/workspace/..."],
    ["..a/b..", "/workspace/..a/b.."],
    [" spaced name ", "/workspace/ spaced name "],
    ["a\\..\\b", "/workspace/a\\..\\b"],
  ])("normalises %j to %j", (path, expected) => {
    expect(resolveWorkspacePath(path, workspace)).toBe(expected);
  });

  it.each([["."], ["./"], ["/workspace"], ["/workspace/"], ["/workspace/."]])("%j is the workspace itself", (path) => {
    expect(resolveWorkspacePath(path, workspace)).toBe(workspace);
  });

  it("works with a nested workspace and with / as the workspace", () => {
    expect(resolveWorkspacePath("x", "/home/user")).toBe("/home/user/x");
    expect(() => resolveWorkspacePath("/home/userx", "/home/user")).toThrow(PathError);
    expect(resolveWorkspacePath("/etc/x", "/")).toBe("/etc/x");
  });
});

describe("resolveWorkingDirectory", () => {
  it("defaults to the workspace, joins relative paths and keeps absolute ones", () => {
    expect(resolveWorkingDirectory(undefined, workspace)).toBe(workspace);
    expect(resolveWorkingDirectory("sub", workspace)).toBe("/workspace/sub");
    expect(resolveWorkingDirectory("/tmp", workspace)).toBe("/tmp");
  });

  it("refuses a NUL byte", () => {
    expect(() => resolveWorkingDirectory("a\0", workspace)).toThrow(PathError);
  });
});
