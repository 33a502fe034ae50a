import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SbxSandbox, type FileSearchMode } from "../src/index.js";
import { BACKENDS } from "./backends.js";

const encoder = new TextEncoder();

/**
 * deepagents' ls, glob and grep on each backend as `auto` picks them (Docker: deepagents' own shell commands; the
 * fake: sbx's file API), and through the file API forced on every backend, so on Docker both ways are checked
 * against the same expectations.
 */
describe.for(BACKENDS)("SbxSandbox ls, glob and grep on $name", (backend) => {
  let sandbox: SbxSandbox;
  /** Paths of this file's tree, under the workspace. */
  let root: string;

  beforeAll(async () => {
    if (!backend.usable) return;
    sandbox = await SbxSandbox.create(backend.target, { timeoutMs: 300_000, metadata: { test: "sbx-deepagents" } });
    root = `${sandbox.workspace}/tree`;
    const results = await sandbox.uploadFiles([
      [`${root}/src/main.py`, encoder.encode("import util\nprint('needle one')\n")],
      [`${root}/src/util.py`, encoder.encode("def needle():\n    return 'needle two'\n")],
      [`${root}/src/deep/er/leaf.ts`, encoder.encode("export const x = 'needle three';\n")],
      [`${root}/README.md`, encoder.encode("# a needle in a README\n")],
      [`${root}/image.png`, new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x6e, 0x65, 0x65, 0x64, 0x6c, 0x65])],
    ]);
    expect(results.every((result) => result.error === null)).toBe(true);
  });
  afterAll(async () => {
    await sandbox?.close();
  });

  describe.for<FileSearchMode>(["auto", "native"])("ls, glob and grep (fileSearch: %s)", (mode) => {
    const view = () => (mode === "auto" ? sandbox : new SbxSandbox(sandbox.sandbox, { fileSearch: mode, ownsSandbox: false }));

    it("lists one folder, directories with a trailing slash", async (context) => {
      if (!backend.usable) return context.skip(`${backend.name} is not usable here`);
      const listed = await view().ls(root);
      const entries = (listed.files ?? []).map((file) => [file.path, file.is_dir, file.is_dir ? null : file.size]).sort();
      expect(entries).toEqual([
        [`${root}/README.md`, false, 23],
        [`${root}/image.png`, false, 10],
        [`${root}/src/`, true, null],
      ]);
    });

    it("globs relative to the search root with deepagents' pattern meanings", async (context) => {
      if (!backend.usable) return context.skip(`${backend.name} is not usable here`);
      const paths = async (pattern: string) => ((await view().glob(pattern, root)).files ?? []).map((file) => file.path).sort();
      expect(await paths("**/*.py")).toEqual(["src/main.py", "src/util.py"]);
      expect(await paths("*.md")).toEqual(["README.md"]);
      expect(await paths("src/**/*.ts")).toEqual(["src/deep/er/leaf.ts"]);
      expect(await paths("src/?ain.py")).toEqual(["src/main.py"]);
      expect(await paths("src/[mu]*.py")).toEqual(["src/main.py", "src/util.py"]);
    });

    it("greps literally, skips binary files, filters by name glob and caps the count", async (context) => {
      if (!backend.usable) return context.skip(`${backend.name} is not usable here`);
      const found = await view().grep("needle", root);
      expect((found.matches ?? []).map((match) => `${match.path}:${match.line}:${match.text}`).sort()).toEqual([
        `${root}/README.md:1:# a needle in a README`,
        `${root}/src/deep/er/leaf.ts:1:export const x = 'needle three';`,
        `${root}/src/main.py:2:print('needle one')`,
        `${root}/src/util.py:1:def needle():`,
        `${root}/src/util.py:2:    return 'needle two'`,
      ]);
      expect(found.truncated ?? false).toBe(false);
      const literal = await view().grep("needle(", root);
      expect((literal.matches ?? []).map((match) => match.path)).toEqual([`${root}/src/util.py`]);
      const onlyPython = await view().grep("needle", root, "*.py");
      expect(new Set((onlyPython.matches ?? []).map((match) => match.path))).toEqual(new Set([`${root}/src/main.py`, `${root}/src/util.py`]));
      const capped = await view().grep("needle", `${root}/src/util.py`, null, 1);
      expect(capped).toEqual({ matches: [{ path: `${root}/src/util.py`, line: 1, text: "def needle():" }], truncated: true });
    });
  });
});
