import { randomUUID } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import type { SandboxMcpServerOptions } from "./options.js";
import { IdleTimer } from "./idle-timer.js";
import { createSandboxMcpServer, type SandboxMcpSession } from "./server.js";

/** Where and how to listen for Streamable HTTP. */
export interface HttpServeOptions extends SandboxMcpServerOptions {
  /** Port; 0 (default) picks a free one. */
  port?: number;
  /** Address to bind. Default `"127.0.0.1"` (loopback only). Binding elsewhere exposes code execution to the network: put authentication in front. */
  host?: string;
  /** Path of the MCP endpoint. Default `"/mcp"`. */
  path?: string;
  /**
   * Browser origins allowed to call the server (for example `"http://localhost:5173"`), besides the server's own.
   * A request carrying any other `Origin` (including `null`) is refused with 403, as the Streamable HTTP transport
   * requires: otherwise any web page the user visits could drive the server. Requests without `Origin` (non-browser
   * clients) are not affected. Default none.
   */
  allowedOrigins?: readonly string[];
  /**
   * Live sessions at most (each holds a server and, once used, a sandbox). An `initialize` past the cap is refused
   * with 503, `Retry-After` and a JSON-RPC error saying so; existing sessions are not affected. Default 16.
   */
  maxSessions?: number;
  /**
   * A session with no request for this long is closed and its sandbox killed (a request still running keeps it
   * open), so clients that went away without `DELETE` do not hold containers until the server exits. Default 600000 (10 minutes).
   */
  sessionIdleTimeoutMs?: number;
}

/** Default cap on live sessions. */
export const DEFAULT_MAX_SESSIONS = 16;
/** Default idle time after which a session is closed and its sandbox killed: 10 minutes. */
export const DEFAULT_SESSION_IDLE_TIMEOUT_MS = 600_000;
/** JSON-RPC error code sent with 503 when the session cap is reached (server-defined range). */
export const TOO_MANY_SESSIONS_ERROR_CODE = -32001;

/** A running Streamable HTTP server. */
export interface HttpMcpServer {
  /** The endpoint URL, for example `http://127.0.0.1:43123/mcp`. */
  readonly url: URL;
  /** Live sessions (one sandbox each). */
  readonly sessionCount: number;
  /** Stops listening, closes every session and kills every session's sandbox. */
  close(): Promise<void>;
}

/** One live session: its transport, its server (and sandbox), and its idle clock. */
interface LiveSession {
  readonly transport: StreamableHTTPServerTransport;
  readonly session: SandboxMcpSession;
  readonly idle: IdleTimer;
}

const LOOPBACK_HOSTS = new Set(["127.0.0.1", "localhost", "::1", "[::1]"]);

function reply(response: ServerResponse, status: number, message: string, options: { code?: number; headers?: Record<string, string> } = {}): void {
  response
    .writeHead(status, { "content-type": "application/json", ...options.headers })
    .end(JSON.stringify({ jsonrpc: "2.0", error: { code: options.code ?? -32000, message }, id: null }));
}

/** A positive whole number option, or its default; anything else is a programming error, thrown at start-up. */
function positiveInteger(value: number | undefined, fallback: number, name: string): number {
  if (value === undefined) return fallback;
  if (!Number.isSafeInteger(value) || value <= 0) throw new TypeError(`serveHttp: ${name} must be a positive whole number, not ${String(value)}.`);
  return value;
}

/**
 * Serves sandbox tools over MCP Streamable HTTP: one MCP session (and one sandbox) per `mcp-session-id`, killed on
 * `DELETE`, after `sessionIdleTimeoutMs` without a request, or on `close()`; at most `maxSessions` at once. When
 * bound to loopback, requests whose `Host` header is not a loopback name are refused (DNS-rebinding protection), and
 * a request whose `Origin` is present and not allowed is refused with 403 wherever it is bound.
 */
export async function serveHttp(options: HttpServeOptions = {}): Promise<HttpMcpServer> {
  const host = options.host ?? "127.0.0.1";
  const path = options.path ?? "/mcp";
  const maxSessions = positiveInteger(options.maxSessions, DEFAULT_MAX_SESSIONS, "maxSessions");
  const idleTimeoutMs = positiveInteger(options.sessionIdleTimeoutMs, DEFAULT_SESSION_IDLE_TIMEOUT_MS, "sessionIdleTimeoutMs");
  const sessions = new Map<string, LiveSession>();
  const loopbackOnly = LOOPBACK_HOSTS.has(host);
  let initializing = 0;
  let ownOrigins = new Set<string>();
  const allowedOrigins = new Set(options.allowedOrigins ?? []);

  /** Closes a session: out of the table, its server closed and its sandbox killed. */
  async function endSession(id: string): Promise<void> {
    const live = sessions.get(id);
    if (!live) return;
    sessions.delete(id);
    live.idle.stop();
    await live.session.close();
    await live.transport.close().catch(() => undefined);
  }

  async function handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const url = new URL(request.url ?? "/", "http://localhost");
    if (url.pathname !== path) return reply(response, 404, `Not found; the MCP endpoint is ${path}.`);
    const hostHeader = (request.headers.host ?? "").replace(/:\d+$/, "");
    if (loopbackOnly && !LOOPBACK_HOSTS.has(hostHeader)) return reply(response, 403, "Host not allowed.");
    const origin = request.headers.origin;
    if (origin !== undefined && !ownOrigins.has(origin) && !allowedOrigins.has(origin)) {
      return reply(response, 403, `Origin ${JSON.stringify(origin)} is not allowed; start the server with allowedOrigins to admit a browser origin.`);
    }
    const sessionId = request.headers["mcp-session-id"];
    if (typeof sessionId === "string") {
      const existing = sessions.get(sessionId);
      if (!existing) return reply(response, 404, "Unknown or closed MCP session; initialize a new one.");
      existing.idle.track(response);
      return existing.transport.handleRequest(request, response);
    }
    if (request.method !== "POST") return reply(response, 400, "No mcp-session-id: initialize a session with a POST first.");
    if (sessions.size + initializing >= maxSessions) {
      return reply(
        response,
        503,
        `Too many MCP sessions: this server holds at most ${maxSessions} (maxSessions). End one with DELETE, or retry after idle sessions expire (${Math.ceil(idleTimeoutMs / 1000)} s without a request).`,
        {
          code: TOO_MANY_SESSIONS_ERROR_CODE,
          headers: { "retry-after": String(Math.ceil(idleTimeoutMs / 1000)) },
        },
      );
    }
    initializing += 1;
    const session = createSandboxMcpServer(options);
    const idle = new IdleTimer(idleTimeoutMs, () => {
      if (transport.sessionId) void endSession(transport.sessionId);
    });
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (id) => {
        sessions.set(id, { transport, session, idle });
      },
    });
    transport.onclose = () => {
      if (transport.sessionId) sessions.delete(transport.sessionId);
      idle.stop();
      void session.close();
    };
    try {
      await session.server.connect(transport);
      idle.track(response);
      await transport.handleRequest(request, response);
    } finally {
      initializing -= 1;
    }
    if (!transport.sessionId) {
      idle.stop();
      await session.close(); // Not an initialize request: nothing to keep.
    }
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
  ownOrigins = new Set([
    url.origin,
    ...(loopbackOnly ? [`http://localhost:${address.port}`, `http://127.0.0.1:${address.port}`, `http://[::1]:${address.port}`] : []),
  ]);
  return {
    url,
    get sessionCount() {
      return sessions.size;
    },
    async close() {
      await Promise.all([...sessions.keys()].map(endSession));
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
