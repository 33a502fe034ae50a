import { Manifest, SandboxUnsupportedFeatureError } from "@openai/agents-core/sandbox";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SbxSandboxClient, type SbxSandboxSession } from "../src/index.js";
import { BACKENDS } from "./backends.js";

describe.for(BACKENDS)("SbxSandboxSession on $name", (backend) => {
  let session: SbxSandboxSession;
  const client = new SbxSandboxClient({ target: backend.target, createOptions: { timeoutMs: 300_000, metadata: { test: "sbx-openai-agents" } } });

  beforeAll(async () => {
    if (!backend.usable) return;
    session = (await client.create()) as SbxSandboxSession;
    await session.sandbox.files.write("notes/a.txt", "alpha\n");
  });
  afterAll(async () => {
    await session?.close();
  });

  it("reads files, lists folders and answers existence through sbx's file API", async (context) => {
    if (!backend.usable) return context.skip(`${backend.name} is not usable here`);
    const root = session.state.manifest.root;
    expect(root).toBe(session.sandbox.workspace);
    expect(new TextDecoder().decode(await session.readFile({ path: "notes/a.txt" }))).toBe("alpha\n");
    expect(await session.listDir({ path: "notes" })).toEqual([{ name: "a.txt", path: `${root}/notes/a.txt`, type: "file" }]);
    expect(await session.pathExists("notes/a.txt")).toBe(true);
    expect(await session.pathExists("notes/missing.txt")).toBe(false);
    expect(await session.directoryExists("notes")).toBe(true);
    expect(await session.directoryExists("notes/a.txt")).toBe(false);
    expect(await session.directoryExists("nowhere")).toBe(false);
    await expect(session.readFile({ path: "/etc/hostname" })).rejects.toMatchObject({ code: "SBX_PATH", reason: "escapes-workspace" });
  });

  it("runs commands in the manifest root or workdir; refuses a PTY and runAs it cannot give", async (context) => {
    if (!backend.usable) return context.skip(`${backend.name} is not usable here`);
    const root = session.state.manifest.root;
    expect(await session.exec({ cmd: "pwd" })).toMatchObject({ output: `${root}\n`, exitCode: 0, stderr: "" });
    expect((await session.exec({ cmd: "pwd", workdir: "notes" })).output).toBe(`${root}/notes\n`);
    expect(await session.running()).toBe(true);
    expect(session.supportsPty()).toBe(false);
    await expect(session.exec({ cmd: "cat", tty: true })).rejects.toBeInstanceOf(SandboxUnsupportedFeatureError);
    await expect(session.exec({ cmd: "id", runAs: "root" })).rejects.toBeInstanceOf(SandboxUnsupportedFeatureError);
  });

  it("refuses a manifest it cannot materialize, before creating anything", async (context) => {
    if (!backend.usable) return context.skip(`${backend.name} is not usable here`);
    const withEntries = new Manifest({ entries: { "hello.txt": { type: "file", content: "hi" } } });
    await expect(client.create({ manifest: withEntries })).rejects.toBeInstanceOf(SandboxUnsupportedFeatureError);
  });
});
