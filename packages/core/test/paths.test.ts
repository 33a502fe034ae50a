import { describe, expect, it } from "vitest";
import { PathError } from "../src/index.ts";
import { resolveWorkingDirectory, resolveWorkspacePath } from "../src/security/paths.ts";

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
    // Names of at most 255 bytes each (a single 4096-byte name is refused by the NAME_MAX rule below).
    const path = `${"a/".repeat(2047)}aa`;
    expect(path.length).toBe(4096);
    expect(resolveWorkspacePath(path, workspace)).toBe(`${workspace}/${path}`);
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

  it("accepts a 255-byte name and refuses a 256-byte one (NAME_MAX), counting the bytes a name stands for", () => {
    expect(resolveWorkspacePath(`dir/${"x".repeat(255)}`, workspace)).toBe(`/workspace/dir/${"x".repeat(255)}`);
    // 85 three-byte characters are 255 bytes; one more ASCII byte is 256.
    expect(resolveWorkspacePath("\u20ac".repeat(85), workspace)).toBe(`/workspace/${"\u20ac".repeat(85)}`);
    // Lone surrogates U+DC80-U+DCFF stand for one raw byte each (ADR 0031): 255 of them are 255 bytes.
    expect(resolveWorkspacePath("\udcff".repeat(255), workspace)).toBe(`/workspace/${"\udcff".repeat(255)}`);
    for (const path of [`${"x".repeat(256)}/file`, `a/${"\u20ac".repeat(85)}x`, "\udcff".repeat(256)]) {
      const error = refusal(path);
      expect(error.reason).toBe("invalid");
      expect(error.message).toContain("256 bytes long");
    }
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
