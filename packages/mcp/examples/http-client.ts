import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { serveHttp } from "../src/index.js";

/**
 * The example of docs/integrations/mcp.md, kept as code so it is type-checked and run by test/docs-example.test.ts,
 * which also checks the page shows these lines verbatim.
 */
export async function mcpOverHttp(target: string): Promise<unknown> {
  // #region example
  // The server: one sandbox per MCP session on the target chosen here; network denied unless you pass a policy.
  const server = await serveHttp({ target, port: 0 }); // e.g. "docker://python:3.12-slim"; 127.0.0.1, free port

  // Any MCP client; here the SDK's own.
  const client = new Client({ name: "example", version: "1.0.0" });
  await client.connect(new StreamableHTTPClientTransport(server.url));
  const result = await client.callTool({ name: "run_command", arguments: { command: "echo $((6 * 7))" } });
  console.log(result.structuredContent); // { exitCode: 0, stdout: "42\n", stderr: "", ... }

  await client.close();
  await server.close(); // ends every session and kills every sandbox
  // #endregion example
  return result.structuredContent;
}
