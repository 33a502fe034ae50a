import type { Experimental_SandboxSession } from "ai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSandboxSession, createSandboxTools, type SbxSandboxSession } from "../src/index.js";
import { BACKENDS } from "./backends.js";

async function readAll(stream: ReadableStream<Uint8Array>): Promise<string> {
  return new Response(stream).text();
}

describe.each(BACKENDS)("Experimental_SandboxSession over an sbx sandbox, on $name", (backend) => {
  let session: SbxSandboxSession;
  let restricted: Experimental_SandboxSession;
  beforeAll(async () => {
    if (!backend.usable) return;
    session = createSandboxSession(await backend.create());
    restricted = session.restricted();
  });
  afterAll(async () => {
    await session?.kill();
  });

  it.skipIf(!backend.usable)("describes the sandbox for the agent's instructions", () => {
    expect(restricted.description).toContain(`sbx, id ${session.sandbox.id}`);
    expect(restricted.description).toContain(`file root: ${session.sandbox.workspace}`);
    expect(restricted.description).toContain("no outbound network");
  });

  it.skipIf(!backend.usable)("run returns exit code, stdout and stderr, with env and a relative working directory", async () => {
    await restricted.writeTextFile({ path: "dir/keep.txt", content: "" });
    expect(await restricted.run({ command: "echo $GREETING; pwd; echo e >&2; exit 4", env: { GREETING: "hi" }, workingDirectory: "dir" })).toEqual({
      exitCode: 4,
      stdout: `hi\n${session.sandbox.workspace}/dir\n`,
      stderr: "e\n",
    });
  });

  it.skipIf(!backend.usable)("spawn streams output, takes stdin when asked, and reports the exit code", async () => {
    const process = await restricted.spawn({ command: "read line; echo got:$line; echo err >&2; exit 2", stdin: true });
    const writer = process.stdin.getWriter();
    await writer.write(new TextEncoder().encode("hello\n"));
    await writer.close();
    const [stdout, stderr, exit] = await Promise.all([readAll(process.stdout), readAll(process.stderr), process.wait()]);
    expect({ stdout, stderr, exit }).toEqual({ stdout: "got:hello\n", stderr: "err\n", exit: { exitCode: 2 } });
    expect("stdin" in (await restricted.spawn({ command: "true" }))).toBe(false);
  });

  it.skipIf(!backend.usable)("spawn's kill ends the process", async () => {
    const process = await restricted.spawn({ command: "echo started; sleep 60" });
    const reader = process.stdout.getReader();
    expect(new TextDecoder().decode((await reader.read()).value)).toBe("started\n");
    await process.kill();
    const { exitCode } = await process.wait();
    expect(exitCode).not.toBe(0);
  });

  it.skipIf(!backend.usable)("reads and writes text, bytes and streams; missing paths are null", async () => {
    await restricted.writeTextFile({ path: "text/lines.txt", content: "one\ntwo\nthree\nfour\n" });
    expect(await restricted.readTextFile({ path: "text/lines.txt", startLine: 2, endLine: 3 })).toBe("two\nthree\n");
    expect(await restricted.readTextFile({ path: "text/lines.txt", startLine: 4, endLine: 99 })).toBe("four\n");
    await restricted.writeBinaryFile({ path: "bin/b.dat", content: new Uint8Array([0, 1, 254, 255]) });
    expect(await restricted.readBinaryFile({ path: "bin/b.dat" })).toEqual(new Uint8Array([0, 1, 254, 255]));
    await restricted.writeFile({ path: "stream.txt", content: new Blob(["streamed ", "content"]).stream() });
    expect(await readAll((await restricted.readFile({ path: "stream.txt" }))!)).toBe("streamed content");
    await restricted.writeTextFile({ path: "latin.txt", content: "café", encoding: "latin1" });
    expect(await restricted.readBinaryFile({ path: "latin.txt" })).toEqual(new Uint8Array([0x63, 0x61, 0x66, 0xe9]));
    expect(await restricted.readTextFile({ path: "latin.txt", encoding: "latin1" })).toBe("café");
    expect(await restricted.readTextFile({ path: "nope.txt" })).toBeNull();
    expect(await restricted.readBinaryFile({ path: "nope.txt" })).toBeNull();
    expect(await restricted.readFile({ path: "nope.txt" })).toBeNull();
    await expect(restricted.writeTextFile({ path: "x.txt", content: "x", encoding: "ebcdic" })).rejects.toMatchObject({
      code: "SBX_INVALID_ARGUMENT",
    });
  });

  it.skipIf(!backend.usable)("stat, listDirectory and deleteFile follow the interface's null/false/reject rules", async () => {
    await restricted.writeTextFile({ path: "tree/a.txt", content: "abc" });
    await restricted.writeTextFile({ path: "tree/sub/b.txt", content: "" });
    expect(await restricted.stat({ path: "tree/a.txt" })).toEqual({ type: "file", size: 3 });
    expect((await restricted.stat({ path: "tree" }))?.type).toBe("directory");
    expect(await restricted.stat({ path: "tree/none" })).toBeNull();
    // Symbolic links are followed, as the AI SDK's SandboxFileStat says: a link to a file is the file, to a folder the folder.
    expect((await restricted.run({ command: "ln -s a.txt tree/link-to-file && ln -s sub tree/link-to-folder" })).exitCode).toBe(0);
    expect(await restricted.stat({ path: "tree/link-to-file" })).toEqual({ type: "file", size: 3 });
    expect((await restricted.stat({ path: "tree/link-to-folder" }))?.type).toBe("directory");
    const entries = (await restricted.listDirectory({ path: "tree" }))!.sort((left, right) => left.name.localeCompare(right.name));
    expect(entries).toEqual([
      { name: "a.txt", type: "file" },
      { name: "link-to-file", type: "symlink" },
      { name: "link-to-folder", type: "symlink" },
      { name: "sub", type: "directory" },
    ]);
    expect(await restricted.listDirectory({ path: "no-such-dir" })).toBeNull();
    expect(await restricted.deleteFile({ path: "tree/a.txt" })).toBe(true);
    expect(await restricted.deleteFile({ path: "tree/a.txt" })).toBe(false);
    await expect(restricted.deleteFile({ path: "tree/sub" })).rejects.toMatchObject({ code: "SBX_PATH" });
    await expect(restricted.readTextFile({ path: "../../etc/passwd" })).rejects.toMatchObject({ code: "SBX_PATH" });
  });

  it.skipIf(!backend.usable)("the restricted session and the default tools cannot kill the sandbox; allowKill adds killSandbox", async () => {
    expect(Object.keys(restricted).sort()).toEqual([
      "deleteFile",
      "description",
      "listDirectory",
      "readBinaryFile",
      "readFile",
      "readTextFile",
      "run",
      "spawn",
      "stat",
      "writeBinaryFile",
      "writeFile",
      "writeTextFile",
    ]);
    expect(Object.isFrozen(restricted)).toBe(true);
    expect(Object.keys(createSandboxTools(session)).sort()).toEqual(["listFolder", "readFile", "runCode", "runCommand", "writeFile"]);
    expect(Object.keys(createSandboxTools(session, { allowKill: true }))).toContain("killSandbox");
    expect(session.sandbox.closed).toBe(false);
  });
});
