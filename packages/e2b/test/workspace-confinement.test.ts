import { describe, expect, it } from "vitest";
import { ancestorsBelow, confineToWorkspace, symlinkDestination } from "../src/workspace-confinement.js";

describe("workspace confinement helpers", () => {
  it("lists the ancestors strictly between the workspace and the path, shallowest first", () => {
    expect(ancestorsBelow("/home/user/a/b/c.txt", "/home/user")).toEqual(["/home/user/a", "/home/user/a/b"]);
    expect(ancestorsBelow("/home/user/c.txt", "/home/user")).toEqual([]);
  });

  it("resolves absolute (envd's EvalSymlinks) and relative symlink targets", () => {
    expect(symlinkDestination("/home/user/link", { symlinkTarget: "/etc" })).toBe("/etc");
    expect(symlinkDestination("/home/user/sub/link", { symlinkTarget: "../../../etc/./x" })).toBe("/etc/x");
    expect(symlinkDestination("/home/user/link", { type: "file" })).toBeUndefined();
  });

  it("refuses an escaping ancestor and passes a path with only inside links or missing entries", async () => {
    const entries: Record<string, { type: string; symlinkTarget?: string }> = {
      "/home/user/out": { type: "dir", symlinkTarget: "/root" },
      "/home/user/in": { type: "dir", symlinkTarget: "/home/user/data" },
    };
    const stat = async (path: string) => entries[path];
    await expect(confineToWorkspace("/home/user/out/x", "/home/user", stat, { includeSelf: false })).rejects.toMatchObject({
      reason: "escapes-workspace",
    });
    await expect(confineToWorkspace("/home/user/in/x", "/home/user", stat, { includeSelf: true })).resolves.toBeUndefined();
    await expect(confineToWorkspace("/home/user/out", "/home/user", stat, { includeSelf: true })).rejects.toMatchObject({
      reason: "escapes-workspace",
    });
  });
});
