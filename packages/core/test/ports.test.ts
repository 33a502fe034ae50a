/**
 * Exposed ports (ADR 0053): the token check, the host side of the agent's `connect` operation against hostile frames,
 * and whole connections through the agent core attaches to a host-process driver (the agent runs on this host, so
 * "inside" is this host's loopback: the servers are the test's own, on 127.0.0.1).
 */
import { randomBytes } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { connect, createServer, type Server, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { Sandbox, SandboxProviderV1 } from "../src/index.ts";
import { createSandboxFromDriver, defineCapabilities, type ResolvedCreateOptions, type SandboxDriverV1 } from "../src/adapter.ts";
import { connectThroughAgent } from "../src/agent/agent-port-connection.ts";
import { encodeAgentFrame } from "../src/agent/agent-frames.ts";
import { AgentSession } from "../src/agent/agent-session.ts";
import { checkPortToken, MAX_PORT_REQUEST_HEAD_BYTES } from "../src/security/port-token.ts";
import type { SpawnedProcess } from "../src/v1/provider.ts";
import { caught } from "./support/caught.ts";
import { createHostProcessDriver } from "./support/host-process-driver.ts";

const OPTIONS = {
  network: { egress: "deny" },
  timeoutMs: 60_000,
  env: {},
  secrets: {},
  metadata: {},
  mounts: [],
  user: "default",
  allowFake: false,
  settings: {},
} as unknown as ResolvedCreateOptions;

const provider: SandboxProviderV1 = {
  specificationVersion: "sbx-v1",
  backend: "host-agent-ports",
  packageName: "none",
  capabilities: defineCapabilities({ STATEFUL_CODE: true, BACKGROUND_COMMANDS: true, STDIN: true, PORTS: true, languages: ["python"] }),
  isolating: false,
  detect: async () => ({ backend: "host-agent-ports", usable: true, reason: "", remedy: "", isolating: false }),
  create: async () => {
    throw new Error("not used");
  },
};

describe("the port token check", () => {
  const token = "t".repeat(43);
  const head = (lines: string[]) => Buffer.from(`${lines.join("\r\n")}\r\n\r\n`, "latin1");

  it("accepts the right token, removes its header and keeps what follows the head", () => {
    const check = checkPortToken(
      Buffer.concat([head(["POST /x HTTP/1.1", "Host: a", `X-Sbx-Port-Token: ${token}`, "A: b"]), Buffer.from("body")]),
      token,
    );
    expect(check.kind).toBe("accepted");
    expect(check.kind === "accepted" && check.forward.toString("latin1")).toBe("POST /x HTTP/1.1\r\nHost: a\r\nA: b\r\n\r\nbody");
  });

  it("refuses a missing, wrong or longer token, a head that is not HTTP/1.x, and waits for an incomplete head up to its bound", () => {
    expect(checkPortToken(head(["GET / HTTP/1.1", "Host: a"]), token).kind).toBe("refused");
    expect(checkPortToken(head(["GET / HTTP/1.1", `x-sbx-port-token: ${"u".repeat(43)}`]), token).kind).toBe("refused");
    expect(checkPortToken(head(["GET / HTTP/1.1", `x-sbx-port-token: ${token}x`]), token).kind).toBe("refused");
    expect(checkPortToken(head(["SSH-2.0-x", `x-sbx-port-token: ${token}`]), token).kind).toBe("refused");
    expect(checkPortToken(head(["GET / HTTP/2", `x-sbx-port-token: ${token}`]), token).kind).toBe("refused");
    expect(checkPortToken(Buffer.from("GET / HTTP/1.1\r\nHost: a\r\n"), token).kind).toBe("more");
    expect(checkPortToken(Buffer.alloc(MAX_PORT_REQUEST_HEAD_BYTES + 1, 0x61), token).kind).toBe("refused");
  });
});

/** A session fed frames by the test, recording what the host sent. */
function fakeSession(): {
  session: AgentSession;
  sent: Array<Record<string, unknown>>;
  feed: (header: Record<string, unknown>, body?: Uint8Array) => void;
} {
  const sent: Array<Record<string, unknown>> = [];
  const process = {
    pid: "1",
    writeStdin: async (data: Uint8Array) => {
      const buffer = Buffer.from(data);
      const headLength = buffer.readUInt32BE(4);
      const header = JSON.parse(buffer.subarray(8, 8 + headLength).toString("utf8")) as Record<string, unknown>;
      if (header.type === "port_data") header.bodyBytes = buffer.byteLength - 8 - headLength;
      sent.push(header);
    },
    kill: async () => {},
    exit: new Promise(() => {}),
  } as unknown as SpawnedProcess;
  const session = new AgentSession(process, "test", () => {});
  return { session, sent, feed: (header, body) => session.receive(encodeAgentFrame(header, body)) };
}

describe("the host side of the agent's connect operation, against hostile frames", () => {
  const request = (events: string[]) => ({
    port: 8000,
    window: 1024,
    signal: new AbortController().signal,
    onData: (chunk: Uint8Array) => events.push(`data ${chunk.byteLength}`),
    onEnd: () => events.push("end"),
    onClose: (error?: Error) => events.push(`close ${error ? error.message : "clean"}`),
  });

  it("data past the credit the host gave ends the connection with an error, without a throw", async () => {
    const { session, sent, feed } = fakeSession();
    const events: string[] = [];
    const opening = connectThroughAgent(session, request(events), "test");
    const id = sent[0]!.id as number;
    feed({ type: "connected", id, window: 4096 });
    const connection = await opening;
    feed({ type: "port_data", id }, new Uint8Array(1000));
    feed({ type: "port_data", id }, new Uint8Array(100));
    expect(events).toEqual(["data 1000", expect.stringMatching(/^close .*more than the credit/)]);
    expect(sent.at(-1)).toEqual({ type: "port_close", target: id });
    expect(await caught(() => connection.write(new Uint8Array(1)))).toBeInstanceOf(Error);
  });

  it("a bad window or credit, data before connected and an error frame are refusals, never throws; unknown frames are ignored", async () => {
    for (const frames of [
      [{ type: "connected", window: -1 }],
      [{ type: "connected", window: "x" }],
      [{ type: "port_data" }],
      [{ type: "error", code: "connect-refused", message: "m".repeat(100_000) }],
      [{ type: "port_closed" }],
    ]) {
      const { session, sent, feed } = fakeSession();
      const opening = connectThroughAgent(session, request([]), "test");
      const id = sent[0]!.id as number;
      feed({ type: "mystery", id });
      for (const frame of frames) feed({ ...frame, id }, new Uint8Array(10));
      const error = await caught(() => opening);
      expect(error).toBeInstanceOf(Error);
      expect((error as Error).message.length).toBeLessThan(1_000);
    }
    const { session, sent, feed } = fakeSession();
    const events: string[] = [];
    const opening = connectThroughAgent(session, request(events), "test");
    const id = sent[0]!.id as number;
    feed({ type: "connected", id, window: 10 });
    const connection = await opening;
    feed({ type: "port_credit", id, bytes: 2 ** 40 });
    expect(events).toEqual([expect.stringMatching(/^close .*bad credit/)]);
    await expect(connection.write(new Uint8Array(1))).rejects.toThrow();
  });

  it("writes wait for the agent's credit: nothing past the window is sent until port_credit arrives", async () => {
    const { session, sent, feed } = fakeSession();
    const opening = connectThroughAgent(session, request([]), "test");
    const id = sent[0]!.id as number;
    feed({ type: "connected", id, window: 100 });
    const connection = await opening;
    let written = false;
    const writing = connection.write(new Uint8Array(250)).then(() => (written = true));
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(sent.filter((header) => header.type === "port_data").map((header) => header.bodyBytes)).toEqual([100]);
    expect(written).toBe(false);
    feed({ type: "port_credit", id, bytes: 100 });
    feed({ type: "port_credit", id, bytes: 100 });
    await writing;
    expect(sent.filter((header) => header.type === "port_data").map((header) => header.bodyBytes)).toEqual([100, 150]);
  });
});

function listen(server: Server): Promise<number> {
  return new Promise((resolve) => server.listen(0, "127.0.0.1", () => resolve((server.address() as { port: number }).port)));
}

function open(url: string): Promise<Socket> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect({ host: hostname, port: Number(port) }, () => resolve(socket));
    socket.once("error", reject);
  });
}

describe("ports through the agent core attaches (codeAgent)", () => {
  let workspace: string;
  let sandbox: Sandbox;
  const servers: Server[] = [];

  beforeEach(async () => {
    workspace = await mkdtemp(join(tmpdir(), "sbx-agent-ports-"));
    const host = createHostProcessDriver(workspace);
    const driver: SandboxDriverV1 = {
      id: host.id,
      workspace: host.workspace,
      audit: host.audit,
      spawn: (request) => host.spawn(request),
      destroy: () => host.destroy(),
      codeAgent: {},
    };
    sandbox = createSandboxFromDriver(driver, { provider, target: "", options: OPTIONS });
  });

  afterEach(async () => {
    await sandbox.kill();
    for (const server of servers.splice(0)) server.close();
    await rm(workspace, { recursive: true, force: true });
  });

  it("carries 8 MiB each way intact, with half close: the server's reply after the client's end arrives whole", async () => {
    const server = createServer({ allowHalfOpen: true }, (socket) => {
      const chunks: Buffer[] = [];
      socket.on("data", (chunk: Buffer) => chunks.push(chunk));
      socket.on("end", () => {
        const all = Buffer.concat(chunks);
        // The reply: the bytes received, reversed in 1 KiB blocks' order is enough to prove nothing is reordered.
        socket.end(Buffer.from(all).reverse());
      });
    });
    servers.push(server);
    const port = await listen(server);
    const exposed = await sandbox.ports.expose(port, { token: false });
    expect(exposed.token).toBeNull();
    const client = await open(exposed.url);
    const payload = randomBytes(8 * 1024 * 1024);
    const received: Buffer[] = [];
    const ended = new Promise<void>((resolve) => client.on("end", () => resolve()));
    client.on("data", (chunk: Buffer) => received.push(chunk));
    client.end(payload);
    await ended;
    expect(Buffer.concat(received).equals(Buffer.from(payload).reverse())).toBe(true);
    client.destroy();
    await exposed.close();
  });

  it("a port with nothing listening inside closes the client's connection, and serves the next once a server listens", async () => {
    const probe = createServer();
    const port = await listen(probe);
    await new Promise((resolve) => probe.close(resolve));
    const exposed = await sandbox.ports.expose(port, { token: false });
    const client = await open(exposed.url);
    await new Promise<void>((resolve) => client.on("close", () => resolve()));
    const server = createServer((socket) => socket.end("up"));
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(port, "127.0.0.1", () => resolve()));
    const next = await open(exposed.url);
    const text = await new Promise<string>((resolve) => {
      let all = "";
      next.on("data", (chunk: Buffer) => (all += chunk.toString()));
      next.on("end", () => resolve(all));
    });
    expect(text).toBe("up");
    next.destroy();
    expect(exposed.stats()).toMatchObject({ refused: 0 });
  });

  it("refuses bad arguments, and connections past maxConnections are closed at accept", async () => {
    expect(await caught(() => sandbox.ports.expose(0))).toMatchObject({ code: "SBX_INVALID_ARGUMENT" });
    expect(await caught(() => sandbox.ports.expose(8000, { token: "short" }))).toMatchObject({ code: "SBX_INVALID_ARGUMENT" });
    const server = createServer(() => {});
    servers.push(server);
    const port = await listen(server);
    const exposed = await sandbox.ports.expose(port, { token: false, maxConnections: 1 });
    const first = await open(exposed.url);
    const second = await open(exposed.url);
    await new Promise<void>((resolve) => second.on("close", () => resolve()));
    expect(exposed.stats()).toMatchObject({ connections: 1, refused: 1 });
    first.destroy();
    await exposed.close();
  });
});

describe("a driver with its own runCode that declares codeAgent (E2B, ADR 0060)", () => {
  it("keeps its own runCode and code contexts, and gets ports from the agent core attaches", async () => {
    const workspace = await mkdtemp(join(tmpdir(), "sbx-own-code-ports-"));
    const host = createHostProcessDriver(workspace);
    const codeCalls: string[] = [];
    const driver: SandboxDriverV1 = {
      id: host.id,
      workspace: host.workspace,
      audit: host.audit,
      spawn: (request) => host.spawn(request),
      destroy: () => host.destroy(),
      runCode: (request) => {
        codeCalls.push(request.code);
        request.onStdout("own runCode\n");
        return Promise.resolve({ error: null, results: [] });
      },
      createCodeContext: (request) => Promise.resolve({ id: "own-context", language: request.language }),
      codeAgent: { commands: "driver" },
    };
    const sandbox = createSandboxFromDriver(driver, { provider, target: "", options: OPTIONS });
    const server = createServer((socket) => socket.end("from inside"));
    try {
      const execution = await sandbox.runCode("1 + 1");
      expect(execution.stdout).toBe("own runCode\n");
      expect(codeCalls).toEqual(["1 + 1"]);
      expect((await sandbox.createCodeContext()).id).toBe("own-context");
      const port = await listen(server);
      const exposed = await sandbox.ports.expose(port, { token: false });
      const client = await open(exposed.url);
      const text = await new Promise<string>((resolve) => {
        let all = "";
        client.on("data", (chunk: Buffer) => (all += chunk.toString()));
        client.on("end", () => resolve(all));
      });
      expect(text).toBe("from inside");
      client.destroy();
      await exposed.close();
    } finally {
      await sandbox.kill();
      server.close();
      await rm(workspace, { recursive: true, force: true });
    }
  });
});
