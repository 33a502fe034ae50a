import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import type { SandboxMcpServerOptions } from "./options.js";
import { createSandboxMcpServer, type SandboxMcpSession } from "./server.js";

/**
 * Serves sandbox tools over stdio (the MCP client starts this process). One session, one sandbox; the sandbox is
 * killed when the client closes stdin. Resolves with the session once connected; `closed` settles when it ends.
 */
export async function serveStdio(
  options: SandboxMcpServerOptions & { stdin?: NodeJS.ReadableStream; stdout?: NodeJS.WritableStream } = {},
): Promise<SandboxMcpSession & { closed: Promise<void> }> {
  const session = createSandboxMcpServer(options);
  const transport = new StdioServerTransport(options.stdin as never, options.stdout as never);
  let resolveClosed!: () => void;
  const closed = new Promise<void>((resolve) => (resolveClosed = resolve));
  let closing = false;
  const end = () => {
    if (closing) return;
    closing = true;
    void session.close().finally(resolveClosed);
  };
  transport.onclose = end;
  (options.stdin ?? process.stdin).once("end", end);
  await session.server.connect(transport);
  return { ...session, closed };
}
