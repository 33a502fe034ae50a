import { fileURLToPath } from "node:url";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { serveHttp, type HttpMcpServer, type SandboxMcpServerOptions } from "../src/index.js";

/** The two transports every tool is tested over. */
export const TRANSPORTS = ["stdio", "http"] as const;
export type TransportKind = (typeof TRANSPORTS)[number];

const STDIO_FIXTURE = fileURLToPath(new URL("./fixtures/stdio-server.mjs", import.meta.url));
const PACKAGE_DIRECTORY = fileURLToPath(new URL("..", import.meta.url));

/** An MCP SDK client connected to an sbx MCP server over one transport. */
export interface ConnectedClient {
  readonly client: Client;
  /** The HTTP server, for the HTTP transport. */
  readonly http: HttpMcpServer | undefined;
  /** Calls a tool and returns its result (tool errors included, as `isError`). */
  call(name: string, args?: Record<string, unknown>): Promise<CallToolResult>;
  close(): Promise<void>;
}

/**
 * Starts a server with JSON-serialisable `options` and connects the MCP SDK's own client: over stdio the server is
 * a child process (as MCP clients launch it); over HTTP it listens on 127.0.0.1 on an ephemeral port.
 */
export async function connectClient(kind: TransportKind, options: SandboxMcpServerOptions): Promise<ConnectedClient> {
  const client = new Client({ name: "sbx-mcp-test", version: "1.0.0" });
  let http: HttpMcpServer | undefined;
  if (kind === "stdio") {
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [STDIO_FIXTURE],
      cwd: PACKAGE_DIRECTORY,
      env: { ...(process.env as Record<string, string>), SBX_MCP_TEST_OPTIONS: JSON.stringify(options) },
      stderr: "inherit",
    });
    await client.connect(transport);
  } else {
    http = await serveHttp({ ...options, port: 0 });
    await client.connect(new StreamableHTTPClientTransport(http.url));
  }
  return {
    client,
    http,
    call: async (name, args = {}) => (await client.callTool({ name, arguments: args })) as CallToolResult,
    async close() {
      if (kind === "http") await (client.transport as StreamableHTTPClientTransport | undefined)?.terminateSession().catch(() => undefined);
      await client.close();
      await http?.close();
    },
  };
}

/** The text of a tool result's first content item. */
export function textOf(result: CallToolResult): string {
  const first = result.content[0];
  if (!first || first.type !== "text") throw new Error(`expected text content, got ${JSON.stringify(result.content)}`);
  return first.text;
}
