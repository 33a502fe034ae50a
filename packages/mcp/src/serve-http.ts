import { randomUUID } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import type { SandboxMcpServerOptions } from "./options.js";
import { createSandboxMcpServer, type SandboxMcpSession } from "./server.js";

/** Where and how to listen for Streamable HTTP. */
export interface HttpServeOptions extends SandboxMcpServerOptions {
  /** Port; 0 (default) picks a free one. */
  port?: number;
  /** Address to bind. Default `"127.0.0.1"` (loopback only). Binding elsewhere exposes code execution to the network: put authentication in front. */
  host?: string;
  /** Path of the MCP endpoint. Default `"/mcp"`. */
  path?: string;
}

/** A running Streamable HTTP server. */
export interface HttpMcpServer {
  /** The endpoint URL, for example `http://127.0.0.1:43123/mcp`. */
  readonly url: URL;
  /** Live sessions (one sandbox each). */
  readonly sessionCount: number;
  /** Stops listening, closes every session and kills every session's sandbox. */
  close(): Promise<void>;
}

const LOOPBACK_HOSTS = new Set(["127.0.0.1", "localhost", "::1", "[::1]"]);

function reply(response: ServerResponse, status: number, message: string): void {
  response.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify({ jsonrpc: "2.0", error: { code: -32000, message }, id: null }));
}

/**
 * Serves sandbox tools over MCP Streamable HTTP: one MCP session (and one sandbox) per `mcp-session-id`, killed on
 * `DELETE` or `close()`. When bound to loopback, requests whose `Host` header is not a loopback name are refused
 * (DNS-rebinding protection).
 */
export async function serveHttp(options: HttpServeOptions = {}): Promise<HttpMcpServer> {
  const host = options.host ?? "127.0.0.1";
  const path = options.path ?? "/mcp";
  const sessions = new Map<string, { transport: StreamableHTTPServerTransport; session: SandboxMcpSession }>();
  const loopbackOnly = LOOPBACK_HOSTS.has(host);

  async function handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const url = new URL(request.url ?? "/", "http://localhost");
    if (url.pathname !== path) return reply(response, 404, `Not found; the MCP endpoint is ${path}.`);
    const hostHeader = (request.headers.host ?? "").replace(/:\d+$/, "");
    if (loopbackOnly && !LOOPBACK_HOSTS.has(hostHeader)) return reply(response, 403, "Host not allowed.");
    const sessionId = request.headers["mcp-session-id"];
    if (typeof sessionId === "string") {
      const existing = sessions.get(sessionId);
      if (!existing) return reply(response, 404, "Unknown or closed MCP session; initialize a new one.");
      return existing.transport.handleRequest(request, response);
    }
    if (request.method !== "POST") return reply(response, 400, "No mcp-session-id: initialize a session with a POST first.");
    const session = createSandboxMcpServer(options);
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (id) => {
        sessions.set(id, { transport, session });
      },
    });
    transport.onclose = () => {
      if (transport.sessionId) sessions.delete(transport.sessionId);
      void session.close();
    };
    await session.server.connect(transport);
    await transport.handleRequest(request, response);
    if (!transport.sessionId) await session.close(); // Not an initialize request: nothing to keep.
  }

  const server: Server = createServer((request, response) => {
    handle(request, response).catch((error: unknown) => {
      if (!response.headersSent) reply(response, 500, error instanceof Error ? error.message : String(error));
      else response.end();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port ?? 0, host, () => resolve());
  });
  const address = server.address() as AddressInfo;
  const url = new URL(`http://${address.family === "IPv6" ? `[${address.address}]` : address.address}:${address.port}${path}`);
  return {
    url,
    get sessionCount() {
      return sessions.size;
    },
    async close() {
      const open = [...sessions.values()];
      sessions.clear();
      await Promise.all(open.map(async ({ transport, session }) => {
        await session.close();
        await transport.close().catch(() => undefined);
      }));
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
