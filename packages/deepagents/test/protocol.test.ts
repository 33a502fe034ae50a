import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SbxSandbox } from "../src/index.js";
import { BACKENDS } from "./backends.js";

const encoder = new TextEncoder();

describe.for(BACKENDS)("SbxSandbox on $name", (backend) => {
  let sandbox: SbxSandbox;
  /** Paths of this file's tree, under the workspace. */
  let root: string;

  beforeAll(async () => {
    if (!backend.usable) return;
    sandbox = await SbxSandbox.create(backend.target, { timeoutMs: 300_000, metadata: { test: "sbx-deepagents" } });
    root = `${sandbox.workspace}/tree`;
    const results = await sandbox.uploadFiles([
      [`${root}/src/main.py`, encoder.encode("print('one')\n")],
      [`${root}/image.png`, new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x6e, 0x65, 0x65, 0x64, 0x6c, 0x65])],
    ]);
    expect(results.every((result) => result.error === null)).toBe(true);
  });
  afterAll(async () => {
    await sandbox?.close();
  });

  describe("execute", () => {
    it("returns stdout and stderr combined in the order the process wrote them, every time", async (context) => {
      if (!backend.usable) return context.skip(`${backend.name} is not usable here`);
      for (let run = 0; run < 5; run += 1) {
        const result = await sandbox.execute("echo o1; echo e1 >&2; echo o2");
        expect(result).toEqual({ output: "o1\ne1\no2\n", exitCode: 0, truncated: false });
      }
      const loop = await sandbox.execute("for i in 1 2 3; do echo o$i; echo e$i >&2; done; exit 7");
      expect(loop).toEqual({ output: "o1\ne1\no2\ne2\no3\ne3\n", exitCode: 7, truncated: false });
    });

    it("stops a command at commandTimeoutMs and says so, with what it wrote until then", async (context) => {
      if (!backend.usable) return context.skip(`${backend.name} is not usable here`);
      const limited = new SbxSandbox(sandbox.sandbox, { commandTimeoutMs: 1_500, ownsSandbox: false });
      const result = await limited.execute("echo started; sleep 30; echo never");
      expect(result.exitCode).toBeNull();
      expect(result.output).toMatch(/^started\n\[sbx: the command ran past 1500 ms and was killed; the output above is what it wrote until then\]$/);
    });

    it("keeps outputLimitBytes of combined output and says it was truncated", async (context) => {
      if (!backend.usable) return context.skip(`${backend.name} is not usable here`);
      const limited = new SbxSandbox(sandbox.sandbox, { outputLimitBytes: 1_000, ownsSandbox: false });
      const result = await limited.execute("printf '%03000d' 0; printf '%03000d' 0 >&2");
      expect(result).toEqual({ output: "0".repeat(1_000), exitCode: 0, truncated: true });
    });
  });

  describe("uploads and downloads", () => {
    it("moves every byte value both ways", async (context) => {
      if (!backend.usable) return context.skip(`${backend.name} is not usable here`);
      const bytes = Uint8Array.from({ length: 256 }, (_, index) => index);
      const path = `${sandbox.workspace}/bytes/all.bin`;
      expect(await sandbox.uploadFiles([[path, bytes]])).toEqual([{ path, error: null }]);
      expect(await sandbox.downloadFiles([path])).toEqual([{ path, content: bytes, error: null }]);
      expect((await sandbox.execute(`wc -c < ${path}`)).output.trim()).toBe("256");
    });

    it("maps sbx's typed path errors onto deepagents' codes, per file", async (context) => {
      if (!backend.usable) return context.skip(`${backend.name} is not usable here`);
      const workspace = sandbox.workspace;
      expect(await sandbox.downloadFiles([`${workspace}/missing.txt`, `${root}/src`, "/etc/hostname"])).toEqual([
        { path: `${workspace}/missing.txt`, content: null, error: "file_not_found" },
        { path: `${root}/src`, content: null, error: "is_directory" },
        { path: "/etc/hostname", content: null, error: "permission_denied" },
      ]);
      expect(
        await sandbox.uploadFiles([
          [`${root}/src`, encoder.encode("onto a folder")],
          ["/tmp/outside.txt", encoder.encode("outside")],
          [`${workspace}/bad\0name`, encoder.encode("nul")],
          [`${workspace}/fine.txt`, encoder.encode("fine")],
        ]),
      ).toEqual([
        { path: `${root}/src`, error: "is_directory" },
        { path: "/tmp/outside.txt", error: "permission_denied" },
        { path: `${workspace}/bad\0name`, error: "invalid_path" },
        { path: `${workspace}/fine.txt`, error: null },
      ]);
    });
  });

  describe("files through deepagents' BaseSandbox methods", () => {
    it("writes, edits, reads a page with line numbers, reads bytes, and deletes", async (context) => {
      if (!backend.usable) return context.skip(`${backend.name} is not usable here`);
      const path = `${sandbox.workspace}/pages/ten.txt`;
      expect(await sandbox.write(path, Array.from({ length: 10 }, (_, index) => `line ${index + 1}`).join("\n") + "\n")).toEqual({
        path,
        filesUpdate: null,
      });
      expect(await sandbox.edit(path, "line 5\n", "line five\n")).toEqual({ path, filesUpdate: null, occurrences: 1 });
      expect(await sandbox.read(path, 3, 4)).toEqual({
        content: "     4\tline 4\n     5\tline five\n     6\tline 6\n     7\tline 7\n",
        mimeType: "text/plain",
        totalLines: 10,
        startLine: 4,
        endLine: 7,
        nextOffset: 7,
      });
      await sandbox.write(`${sandbox.workspace}/pages/empty.txt`, "");
      // deepagents' shell read echoes the reminder with a newline; the file-API read gives it as its read tool matches it.
      const empty = await sandbox.read(`${sandbox.workspace}/pages/empty.txt`);
      expect({ ...empty, content: (empty.content as string).trimEnd() }).toEqual({
        content: "System reminder: File exists but has empty contents",
        mimeType: "text/plain",
      });
      expect(await sandbox.read(`${root}/image.png`)).toEqual({
        content: new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x6e, 0x65, 0x65, 0x64, 0x6c, 0x65]),
        mimeType: "image/png",
      });
      expect(await sandbox.read(`${sandbox.workspace}/pages/missing.txt`)).toEqual({
        error: `File '${sandbox.workspace}/pages/missing.txt' not found`,
      });
      expect(await sandbox.delete(`${sandbox.workspace}/pages`)).toEqual({ path: `${sandbox.workspace}/pages`, filesUpdate: null });
      expect(await sandbox.sandbox.files.exists(`${sandbox.workspace}/pages`)).toBe(false);
      expect(await sandbox.delete(`${sandbox.workspace}/pages`)).toEqual({ error: `Error: '${sandbox.workspace}/pages' not found` });
    });
  });

  it("reaches the whole filesystem through the shell where it can, and says where the file API stops where it cannot", async (context) => {
    if (!backend.usable) return context.skip(`${backend.name} is not usable here`);
    const listed = await sandbox.ls("/");
    if (backend.name === "docker") {
      expect(listed.files?.map((file) => file.path)).toContain(`${sandbox.workspace}/`);
    } else {
      // The fake's shell has no GNU find, so `auto` chose the file API, which is confined to the workspace.
      expect(listed.error).toBe(
        `Error: cannot list "/": on this sandbox (fake) files are reachable only under the workspace ${sandbox.workspace}; use ${sandbox.workspace} or a path under it.`,
      );
    }
  });
});
