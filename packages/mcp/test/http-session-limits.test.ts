import { request } from "node:http";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { createSandboxProvider } from "@sbx/fake";
import { describe, expect, it } from "vitest";
import { serveHttp, TOO_MANY_SESSIONS_ERROR_CODE, type HttpMcpServer } from "../src/index.js";

const INITIALIZE = JSON.stringify({
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "1" } },
});

/** One raw HTTP request to the server: status, headers and body. */
function send(
  url: URL,
  options: { method?: string; headers?: Record<string, string>; body?: string },
): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: string }> {
  return new Promise((resolve, reject) => {
    const outgoing = request(
      url,
      {
        method: options.method ?? "POST",
        headers: { "content-type": "application/json", accept: "application/json, text/event-stream", ...options.headers },
      },
      (response) => {
        let body = "";
        response.setEncoding("utf8");
        response.on("data", (chunk: string) => (body += chunk));
        response.on("end", () => resolve({ status: response.statusCode ?? 0, headers: response.headers, body }));
      },
    );
    outgoing.on("error", reject);
    outgoing.end(options.body);
  });
}

async function waitFor(condition: () => boolean, what: string): Promise<void> {
  for (let attempt = 0; attempt < 200; attempt += 1) {
    if (condition()) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`timed out waiting for ${what}`);
}

async function withServer(options: Parameters<typeof serveHttp>[0], body: (server: HttpMcpServer) => Promise<void>): Promise<void> {
  const server = await serveHttp({ target: "fake://", ...options });
  try {
    await body(server);
  } finally {
    await server.close();
  }
}

describe("Streamable HTTP: Origin", () => {
  it("refuses a present Origin that is not allowed with 403 (a foreign site, and null), and creates no session", async () => {
    await withServer({}, async (server) => {
      for (const origin of ["https://evil.example", "null", "http://localhost:1"]) {
        const answer = await send(server.url, { headers: { origin }, body: INITIALIZE });
        expect({ origin, status: answer.status }).toEqual({ origin, status: 403 });
        expect(JSON.parse(answer.body).error.message).toContain(`Origin ${JSON.stringify(origin)} is not allowed`);
      }
      expect(server.sessionCount).toBe(0);
    });
  });

  it("admits no Origin (non-browser clients), the server's own origin, and origins given in allowedOrigins", async () => {
    await withServer({ allowedOrigins: ["http://app.test:5173"] }, async (server) => {
      const accepted = [undefined, server.url.origin, `http://localhost:${server.url.port}`, "http://app.test:5173"];
      for (const origin of accepted) {
        const answer = await send(server.url, { headers: origin === undefined ? {} : { origin }, body: INITIALIZE });
        expect({ origin, status: answer.status }).toEqual({ origin, status: 200 });
      }
      expect(server.sessionCount).toBe(4);
    });
  });
});

describe("Streamable HTTP: session cap", () => {
  it("refuses an initialize past maxSessions with 503 and a JSON-RPC error, and admits one again after a session ends", async () => {
    await withServer({ maxSessions: 3 }, async (server) => {
      const ids: string[] = [];
      for (let index = 0; index < 3; index += 1) {
        const answer = await send(server.url, { body: INITIALIZE });
        expect(answer.status).toBe(200);
        ids.push(String(answer.headers["mcp-session-id"]));
      }
      for (let index = 0; index < 50; index += 1) {
        const refused = await send(server.url, { body: INITIALIZE });
        expect(refused.status).toBe(503);
        expect(refused.headers["retry-after"]).toBe("600");
        const error = JSON.parse(refused.body).error;
        expect(error.code).toBe(TOO_MANY_SESSIONS_ERROR_CODE);
        expect(error.message).toMatch(/^Too many MCP sessions: this server holds at most 3 \(maxSessions\)/);
      }
      expect(server.sessionCount).toBe(3);
      expect(
        (await send(server.url, { method: "DELETE", headers: { "mcp-session-id": ids[0]!, "mcp-protocol-version": "2025-06-18" } })).status,
      ).toBe(200);
      expect(server.sessionCount).toBe(2);
      expect((await send(server.url, { body: INITIALIZE })).status).toBe(200);
    });
  });

  it("refuses a bad maxSessions or sessionIdleTimeoutMs at start-up", async () => {
    await expect(serveHttp({ maxSessions: 0 })).rejects.toThrow("maxSessions must be a positive whole number, not 0.");
    await expect(serveHttp({ sessionIdleTimeoutMs: Number.NaN })).rejects.toThrow("sessionIdleTimeoutMs must be a positive whole number, not NaN.");
  });
});

describe("Streamable HTTP: idle sessions", () => {
  it("closes sessions whose clients went away without DELETE and kills their sandboxes", async () => {
    const provider = createSandboxProvider();
    await withServer({ target: provider, sessionIdleTimeoutMs: 1500 }, async (server) => {
      for (let index = 0; index < 8; index += 1) {
        const client = new Client({ name: `gone-${index}`, version: "1" });
        await client.connect(new StreamableHTTPClientTransport(server.url));
        const result = await client.callTool({ name: "run_command", arguments: { command: "echo hi" } });
        expect(result.structuredContent).toMatchObject({ exitCode: 0, stdout: "hi\n" });
        await client.close(); // Goes away without ending its session.
      }
      // Eight sandboxes were made (each session's own); none is killed by anyone but the idle expiry.
      expect(provider.calls.filter((call) => call.kind === "create")).toHaveLength(8);
      await waitFor(() => provider.liveSandboxIds.length === 0 && server.sessionCount === 0, "idle sessions to be closed and their sandboxes killed");
    });
  });

  it("keeps a session whose tool call runs longer than the idle timeout, and one that keeps making requests (no stream held open)", async () => {
    const provider = createSandboxProvider();
    // Idle timeout 2 s against gaps of 250 ms: under a loaded CI machine a 500 ms timeout expired between two requests.
    await withServer({ target: provider, sessionIdleTimeoutMs: 2000 }, async (server) => {
      const initialized = await send(server.url, { body: INITIALIZE });
      const headers = { "mcp-session-id": String(initialized.headers["mcp-session-id"]), "mcp-protocol-version": "2025-06-18" };
      expect((await send(server.url, { headers, body: JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }) })).status).toBe(202);
      const call = (id: number, command: string) =>
        send(server.url, {
          headers,
          body: JSON.stringify({ jsonrpc: "2.0", id, method: "tools/call", params: { name: "run_command", arguments: { command } } }),
        });
      const slow = await call(2, "sleep 3; echo done");
      expect(slow.status).toBe(200);
      expect(slow.body).toContain("exit code 0\\n--- stdout ---\\ndone");
      for (let index = 0; index < 4; index += 1) {
        await new Promise((resolve) => setTimeout(resolve, 250));
        expect((await call(3 + index, "echo again")).body).toContain("again");
      }
      expect(provider.liveSandboxIds).toHaveLength(1);
      expect(server.sessionCount).toBe(1);
      await waitFor(() => provider.liveSandboxIds.length === 0 && server.sessionCount === 0, "the session to expire once idle");
    });
  });
});
