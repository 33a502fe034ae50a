/**
 * The unmodified `modal` SDK (0.11.1 and 0.10.1) against the emulator: sandboxes, exec (streams, stdin, exit codes,
 * the exec timeout the emulator enforces), the filesystem API and its error classes, terminate, fromId, and
 * authentication. Every sandbox is a real container.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startModalEmulator, type ModalEmulator } from "../src/index.js";
import { skipDockerTests, testImage } from "./docker-availability.js";
import { sdkVersions } from "./sdk-versions.js";

let emulator: ModalEmulator;

beforeAll(async () => {
  if (!skipDockerTests) emulator = await startModalEmulator({ image: testImage });
});
afterAll(async () => {
  await emulator?.stop();
});

function clientFor(sdk: (typeof sdkVersions)[number][1], credentials?: { tokenId: string; tokenSecret: string }) {
  const previous = process.env.MODAL_SERVER_URL;
  process.env.MODAL_SERVER_URL = emulator.serverUrl;
  try {
    return new sdk.ModalClient({
      tokenId: credentials?.tokenId ?? emulator.tokenId,
      tokenSecret: credentials?.tokenSecret ?? emulator.tokenSecret,
      logLevel: "error",
    });
  } finally {
    if (previous === undefined) delete process.env.MODAL_SERVER_URL;
    else process.env.MODAL_SERVER_URL = previous;
  }
}

describe.skipIf(skipDockerTests).each(sdkVersions)("%s against the emulator", (_label, sdk) => {
  async function newSandbox(params: Record<string, unknown> = {}) {
    const client = clientFor(sdk);
    const app = await client.apps.fromName("sbx-emulator-test", { createIfMissing: true });
    const sandbox = await client.sandboxes.create(app, client.images.fromRegistry("python:3.12-slim"), { workdir: "/workspace", ...params });
    return { client, sandbox };
  }

  it("exec with pty: true runs on a terminal of Modal's fixed 24x80 with xterm-256color; input reaches it, the exit code is its own", async () => {
    const { sandbox } = await newSandbox({ blockNetwork: true });
    try {
      const process = await sandbox.exec(
        ["sh", "-c", 'test -t 0 && test -t 1 && echo tty; stty size; echo "$TERM"; read line; echo "got $line"; exit 5'],
        {
          pty: true,
        },
      );
      await process.stdin.writeText("typed\n");
      const [stdout, exitCode] = await Promise.all([process.stdout.readText(), process.wait()]);
      // The terminal echoes the typed line whenever it arrives (before or after the first output): checked apart.
      const lines = stdout.replace(/\r/g, "").split("\n");
      expect(lines.filter((line) => line !== "typed")).toEqual(["tty", "24 80", "xterm-256color", "got typed", ""]);
      expect(lines.filter((line) => line === "typed")).toHaveLength(1);
      expect(exitCode).toBe(5);
    } finally {
      await sandbox.terminate();
    }
  });

  it("exec streams stdout and stderr apart, takes stdin, and reports the exit code", async () => {
    const { sandbox } = await newSandbox({ blockNetwork: true });
    try {
      const process = await sandbox.exec(["sh", "-c", "printf 'out\\377'; echo err >&2; pwd; exit 7"], { mode: "binary" });
      const [stdout, stderr, exitCode] = await Promise.all([process.stdout.readBytes(), process.stderr.readBytes(), process.wait()]);
      expect([...stdout]).toEqual([...Buffer.from("out\xff/workspace\n", "latin1")]);
      expect(new TextDecoder().decode(stderr)).toBe("err\n");
      expect(exitCode).toBe(7);
      const cat = await sandbox.exec(["cat"]);
      await cat.stdin.writeText("first ");
      await cat.stdin.writeText("second");
      await cat.stdin.close();
      expect(await cat.stdout.readText()).toBe("first second");
      expect(await cat.wait()).toBe(0);
      const env = await sandbox.exec(["sh", "-c", 'printf %s "$GREETING"'], { env: { GREETING: "hello env" } });
      expect(await env.stdout.readText()).toBe("hello env");
    } finally {
      await sandbox.terminate();
    }
  });

  it("the exec timeout is enforced by the emulator: the process and its children are killed, exit 137", async () => {
    const { sandbox } = await newSandbox({ blockNetwork: true });
    try {
      const process = await sandbox.exec(["sh", "-c", "sleep 30 & sleep 30; echo never"], { timeoutMs: 1000 });
      expect(await process.wait()).toBe(137);
      const listing = await sandbox.exec(["sh", "-c", "ps -eo args | grep -c '^sleep 30$' || true"]);
      expect((await listing.stdout.readText()).trim()).toBe("0");
    } finally {
      await sandbox.terminate();
    }
  });

  it("the filesystem API runs the in-sandbox tool: round trips, listings, stat, and Modal's error classes", async () => {
    const { sandbox } = await newSandbox({ blockNetwork: true });
    try {
      const bytes = new Uint8Array(300_000).map((_, index) => index % 251);
      await sandbox.filesystem.writeBytes(bytes, "/workspace/deep/data.bin");
      expect(Buffer.compare(Buffer.from(await sandbox.filesystem.readBytes("/workspace/deep/data.bin")), Buffer.from(bytes))).toBe(0);
      await sandbox.filesystem.makeDirectory("/workspace/deep/inner");
      expect((await sandbox.filesystem.listFiles("/workspace/deep")).map((entry) => [entry.name, entry.type, entry.size])).toEqual([
        ["data.bin", "file", 300_000],
        ["inner", "directory", expect.any(Number)],
      ]);
      expect(await sandbox.filesystem.stat("/workspace/deep/data.bin")).toMatchObject({
        name: "data.bin",
        path: "/workspace/deep/data.bin",
        type: "file",
        size: 300_000,
        symlinkTarget: null,
      });
      const failures = await Promise.all([
        sandbox.filesystem.readText("/workspace/missing.txt").catch((error: Error) => error.name),
        sandbox.filesystem.readText("/workspace/deep").catch((error: Error) => error.name),
        sandbox.filesystem.listFiles("/workspace/deep/data.bin").catch((error: Error) => error.name),
        sandbox.filesystem.remove("/workspace/deep").catch((error: Error) => error.name),
        sandbox.filesystem.makeDirectory("/workspace/deep/data.bin").catch((error: Error) => error.name),
      ]);
      expect(failures).toEqual([
        "SandboxFilesystemNotFoundError",
        "SandboxFilesystemIsADirectoryError",
        "SandboxFilesystemNotADirectoryError",
        "SandboxFilesystemDirectoryNotEmptyError",
        "SandboxFilesystemPathAlreadyExistsError",
      ]);
      await sandbox.filesystem.remove("/workspace/deep", { recursive: true });
      await expect(sandbox.filesystem.stat("/workspace/deep")).rejects.toMatchObject({ name: "SandboxFilesystemNotFoundError" });
    } finally {
      await sandbox.terminate();
    }
  });

  it("terminate ends the sandbox (poll gives 137, exec is refused with FAILED_PRECONDITION); fromId re-attaches; unknown ids are NOT_FOUND", async () => {
    const { client, sandbox } = await newSandbox();
    const again = await client.sandboxes.fromId(sandbox.sandboxId);
    expect(await again.poll()).toBeNull();
    const process = await again.exec(["echo", "re-attached"]);
    expect(await process.stdout.readText()).toBe("re-attached\n");
    await sandbox.terminate();
    expect(await sandbox.poll()).toBe(137);
    expect(emulator.listSandboxIds()).not.toContain(sandbox.sandboxId);
    await expect(again.exec(["echo", "late"])).rejects.toMatchObject({ code: 9 });
    const unknown = await client.sandboxes.fromId("sb-emu-00000000-0000-0000-0000-000000000000");
    await expect(unknown.exec(["echo"])).rejects.toMatchObject({ code: 5 });
  });

  it("a wrong token is rejected with UNAUTHENTICATED", async () => {
    const client = clientFor(sdk, { tokenId: "ak-wrong", tokenSecret: "as-wrong" });
    await expect(client.apps.fromName("sbx-emulator-test", { createIfMissing: true })).rejects.toMatchObject({ code: 16 });
  });
});
