import { spawn } from "node:child_process";
import { once } from "node:events";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { describe, expect, it } from "vitest";

const BIN = fileURLToPath(new URL("../bin/sbx.js", import.meta.url));

describe("sbx mcp", () => {
  it("serves sandbox tools over stdio to the MCP SDK's client", async () => {
    const client = new Client({ name: "sbx-cli-test", version: "1.0.0" });
    await client.connect(new StdioClientTransport({ command: process.execPath, args: [BIN, "mcp", "--target", "fake://"], stderr: "ignore" }));
    try {
      const result = await client.callTool({ name: "run_command", arguments: { command: "echo over stdio; exit 6" } });
      expect(result.isError).toBeFalsy();
      expect(result.structuredContent).toMatchObject({ exitCode: 6, stdout: "over stdio\n" });
      const missing = await client.callTool({ name: "read_file", arguments: { path: "missing.txt" } });
      expect(missing).toMatchObject({ isError: true, structuredContent: { error: { code: "SBX_FILE_NOT_FOUND" } } });
    } finally {
      await client.close();
    }
  });

  it("serves Streamable HTTP on an ephemeral loopback port with --http 0, prints the URL with --json, and exits 0 on SIGTERM", async () => {
    const child = spawn(process.execPath, [BIN, "mcp", "--target", "fake://", "--network", "allow", "--http", "0", "--json"], {
      stdio: ["ignore", "pipe", "inherit"],
    });
    try {
      const [line] = (await once(createInterface({ input: child.stdout! }), "line")) as [string];
      const announced = JSON.parse(line) as { url: string; target: string; network: unknown };
      expect(announced.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/mcp$/);
      expect(announced).toMatchObject({ target: "fake://", network: { egress: "allow" } });
      const client = new Client({ name: "sbx-cli-test", version: "1.0.0" });
      await client.connect(new StreamableHTTPClientTransport(new URL(announced.url)));
      const created = await client.callTool({ name: "sandbox_create", arguments: {} });
      expect(created.structuredContent).toMatchObject({ backend: "fake", network: { egress: "allow" } });
      await client.close();
    } finally {
      child.kill("SIGTERM");
    }
    const [exitCode] = await once(child, "exit");
    expect(exitCode).toBe(0);
  });

  it("--max-sessions caps HTTP sessions (503 past it) and --idle-timeout is accepted as a duration", async () => {
    const child = spawn(
      process.execPath,
      [BIN, "mcp", "--target", "fake://", "--http", "0", "--json", "--max-sessions", "1", "--idle-timeout", "5m"],
      { stdio: ["ignore", "pipe", "inherit"] },
    );
    try {
      const [line] = (await once(createInterface({ input: child.stdout! }), "line")) as [string];
      const url = (JSON.parse(line) as { url: string }).url;
      const initialize = () =>
        fetch(url, {
          method: "POST",
          headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
          body: JSON.stringify({
            jsonrpc: "2.0",
            id: 1,
            method: "initialize",
            params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "x", version: "1" } },
          }),
        });
      expect((await initialize()).status).toBe(200);
      const refused = await initialize();
      expect(refused.status).toBe(503);
      expect(refused.headers.get("retry-after")).toBe("300");
    } finally {
      child.kill("SIGTERM");
    }
    await once(child, "exit");
  });
});
