import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AUDIT_RESOURCE_URI, TOOL_NAMES } from "../src/index.js";
import { connectClient, textOf, TRANSPORTS, type ConnectedClient } from "./mcp-clients.js";

describe.each(TRANSPORTS)("the sbx MCP server over %s, on the fake", (kind) => {
  let connection: ConnectedClient;
  beforeAll(async () => {
    connection = await connectClient(kind, { target: "fake://", outputLimitBytes: 1000 });
  });
  afterAll(async () => {
    await connection?.close();
  });

  it("lists every tool with an input schema, and the audit resource", async () => {
    const { tools } = await connection.client.listTools();
    expect(tools.map((tool) => tool.name).sort()).toEqual([...TOOL_NAMES].sort());
    const runCommand = tools.find((tool) => tool.name === "run_command")!;
    expect(runCommand.inputSchema.required).toEqual(["command"]);
    expect(Object.keys(runCommand.inputSchema.properties ?? {}).sort()).toEqual(["command", "cwd", "env", "stdin", "timeoutMs"]);
    const { resources } = await connection.client.listResources();
    expect(resources.map((resource) => resource.uri)).toEqual([AUDIT_RESOURCE_URI]);
  });

  it("creates one sandbox per session and reuses it until asked for a fresh one", async () => {
    const first = await connection.call("sandbox_create");
    expect(first.isError).toBeFalsy();
    const created = first.structuredContent as { id: string; backend: string; workspace: string; network: unknown };
    expect(created.backend).toBe("fake");
    expect(created.workspace).toBe("/workspace");
    expect(created.network).toEqual({ egress: "deny" });
    const again = await connection.call("sandbox_create");
    expect((again.structuredContent as { id: string }).id).toBe(created.id);
    const fresh = await connection.call("sandbox_create", { fresh: true });
    expect((fresh.structuredContent as { id: string }).id).not.toBe(created.id);
  });

  it("run_command returns a non-zero exit code as a result, with stdout and stderr", async () => {
    const result = await connection.call("run_command", { command: "echo out; echo err >&2; exit 3", env: { UNUSED: "1" } });
    expect(result.isError).toBeFalsy();
    expect(result.structuredContent).toMatchObject({ exitCode: 3, stdout: "out\n", stderr: "err\n", truncated: { stdout: false, stderr: false } });
    expect(textOf(result)).toBe("exit code 3\n--- stdout ---\nout\n\n--- stderr ---\nerr\n");
    const withStdin = await connection.call("run_command", { command: "cat", stdin: "piped" });
    expect(withStdin.structuredContent).toMatchObject({ exitCode: 0, stdout: "piped" });
  });

  it("cuts long output for the model and says so", async () => {
    const result = await connection.call("run_command", { command: "printf 'x%.0s' $(seq 1 5000)" });
    const { stdout, truncated } = result.structuredContent as { stdout: string; truncated: { stdout: boolean } };
    expect(truncated.stdout).toBe(true);
    expect(stdout).toBe(`${"x".repeat(1000)}\n[output truncated: showing the first 1000 of 5000 bytes]`);
  });

  it("write_file, read_file and list_files work on the same sandbox as run_command", async () => {
    expect((await connection.call("write_file", { path: "notes/a.txt", content: "hello mcp" })).structuredContent).toEqual({
      path: "notes/a.txt",
      size: 9,
    });
    expect(
      (await connection.call("write_file", { path: "notes/b.bin", content: Buffer.from([0, 255, 1]).toString("base64"), encoding: "base64" }))
        .isError,
    ).toBeFalsy();
    expect((await connection.call("run_command", { command: "cat notes/a.txt" })).structuredContent).toMatchObject({ stdout: "hello mcp" });
    expect((await connection.call("read_file", { path: "notes/a.txt" })).structuredContent).toMatchObject({
      content: "hello mcp",
      size: 9,
      truncated: false,
    });
    expect((await connection.call("read_file", { path: "notes/b.bin", encoding: "base64" })).structuredContent).toMatchObject({
      content: "AP8B",
      size: 3,
    });
    const listing = await connection.call("list_files", { path: "notes" });
    expect(
      (listing.structuredContent as { entries: Array<{ name: string; type: string; size: number }> }).entries.map(({ name, type, size }) => ({
        name,
        type,
        size,
      })),
    ).toEqual([
      { name: "a.txt", type: "file", size: 9 },
      { name: "b.bin", type: "file", size: 3 },
    ]);
  });

  it("run_code keeps state in a code context", async () => {
    const context = await connection.call("create_code_context");
    const contextId = (context.structuredContent as { contextId: string }).contextId;
    expect(contextId.length).toBeGreaterThan(0);
    await connection.call("run_code", { code: "x = 41", contextId });
    const result = await connection.call("run_code", { code: "print(x + 1)", contextId });
    expect(result.structuredContent).toMatchObject({ stdout: "42\n", stderr: "", error: null, results: null });
    const raised = await connection.call("run_code", { code: "1 / 0" });
    expect(raised.isError).toBeFalsy();
    expect(raised.structuredContent).toMatchObject({ error: { name: "ZeroDivisionError", value: "division by zero" } });
  });

  it("returns typed sbx errors as tool errors with code and remedy, and the session keeps working", async () => {
    const missing = await connection.call("read_file", { path: "no/such/file.txt" });
    expect(missing.isError).toBe(true);
    expect(missing.structuredContent).toMatchObject({ error: { code: "SBX_FILE_NOT_FOUND", retryable: false } });
    expect(textOf(missing)).toMatch(/^SBX_FILE_NOT_FOUND: .*\nRemedy: Check the path with list_files/s);
    const escape = await connection.call("read_file", { path: "../../etc/passwd" });
    expect(escape.structuredContent).toMatchObject({ error: { code: "SBX_PATH" } });
    const timeout = await connection.call("run_command", { command: "sleep 20", timeoutMs: 500 });
    expect(timeout.isError).toBe(true);
    expect(timeout.structuredContent).toMatchObject({ error: { code: "SBX_TIMEOUT", retryable: true } });
    const language = await connection.call("run_code", { code: "1", language: "cobol" });
    expect(language.isError).toBe(true);
    expect((language.structuredContent as { error: { code: string } }).error.code).toMatch(/^SBX_(CAPABILITY_NOT_SUPPORTED|INVALID_ARGUMENT)$/);
    expect((await connection.call("run_command", { command: "echo still here" })).structuredContent).toMatchObject({ stdout: "still here\n" });
  });

  it("refuses bad arguments as a tool error, not a transport failure", async () => {
    const result = await connection.call("run_command", { command: 42 });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toContain("command");
  });

  it("serves the sandbox's audit record, with network denied by default", async () => {
    await connection.call("sandbox_create");
    const resource = await connection.client.readResource({ uri: AUDIT_RESOURCE_URI });
    const audit = JSON.parse((resource.contents[0] as { text: string }).text);
    expect(audit.backend).toBe("fake");
    expect(audit.policies.network.requested).toEqual({ egress: "deny" });
    expect(audit.policies.network.applied).toEqual({ egress: "deny" });
    expect(audit.isolating).toBe(false);
  });

  it("sandbox_kill destroys the sandbox; the next call gets a new one", async () => {
    const before = (await connection.call("sandbox_create")).structuredContent as { id: string };
    const killed = await connection.call("sandbox_kill");
    expect(killed.structuredContent).toEqual({ killed: before.id });
    const after = (await connection.call("sandbox_create")).structuredContent as { id: string };
    expect(after.id).not.toBe(before.id);
  });
});

describe.each(TRANSPORTS)("server policy over %s", (kind) => {
  it("a backend without stateful code answers create_code_context with CAPABILITY_NOT_SUPPORTED naming backends that have it", async () => {
    const connection = await connectClient(kind, { target: "fake://", sandboxOptions: { settings: { capabilities: { STATEFUL_CODE: false } } } });
    try {
      const result = await connection.call("create_code_context");
      expect(result.isError).toBe(true);
      expect(result.structuredContent).toMatchObject({ error: { code: "SBX_CAPABILITY_NOT_SUPPORTED" } });
      // Every first-party backend whose manifest declares STATEFUL_CODE, sorted by name.
      expect(textOf(result)).toContain("Backends that support it: apple-container, docker, e2b, k8s, modal.");
    } finally {
      await connection.close();
    }
  });

  it("applies the network policy the server was started with", async () => {
    const connection = await connectClient(kind, { target: "fake://", sandboxOptions: { network: { egress: "allow" } } });
    try {
      await connection.call("sandbox_create");
      const resource = await connection.client.readResource({ uri: AUDIT_RESOURCE_URI });
      expect(JSON.parse((resource.contents[0] as { text: string }).text).policies.network.requested).toEqual({ egress: "allow" });
    } finally {
      await connection.close();
    }
  });
});

describe("Streamable HTTP sessions", () => {
  it("give each client its own sandbox and kill it when the client ends the session", async () => {
    const first = await connectClient("http", { target: "fake://" });
    const { StreamableHTTPClientTransport } = await import("@modelcontextprotocol/sdk/client/streamableHttp.js");
    const { Client } = await import("@modelcontextprotocol/sdk/client/index.js");
    const second = new Client({ name: "second", version: "1.0.0" });
    const secondTransport = new StreamableHTTPClientTransport(first.http!.url);
    await second.connect(secondTransport);
    try {
      const one = (await first.call("sandbox_create")).structuredContent as { id: string };
      const two = (await second.callTool({ name: "sandbox_create", arguments: {} })).structuredContent as { id: string };
      expect(one.id).not.toBe(two.id);
      expect(first.http!.sessionCount).toBe(2);
      await secondTransport.terminateSession();
      await second.close();
      expect(first.http!.sessionCount).toBe(1);
    } finally {
      await first.close();
    }
  });

  it("refuses requests whose Host is not loopback (DNS rebinding)", async () => {
    const connection = await connectClient("http", { target: "fake://" });
    try {
      const { request } = await import("node:http");
      const status = await new Promise<number>((resolve, reject) => {
        const outgoing = request(
          connection.http!.url,
          {
            method: "POST",
            headers: { host: "attacker.example", "content-type": "application/json", accept: "application/json, text/event-stream" },
          },
          (response) => {
            response.resume();
            resolve(response.statusCode ?? 0);
          },
        );
        outgoing.on("error", reject);
        outgoing.end(
          JSON.stringify({
            jsonrpc: "2.0",
            id: 1,
            method: "initialize",
            params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "x", version: "1" } },
          }),
        );
      });
      expect(status).toBe(403);
    } finally {
      await connection.close();
    }
  });
});
