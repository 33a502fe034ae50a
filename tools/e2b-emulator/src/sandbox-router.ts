/**
 * Routes data-plane traffic. One URL serves every sandbox; the SDK says which
 * sandbox and port it wants with the `E2b-Sandbox-Id` and `E2b-Sandbox-Port`
 * headers (envd on 49983, the code interpreter on 49999).
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import type { ContainerSandbox } from "./container-sandbox.js";
import { ConnectProtocolError, ServerStream, isStreamingRequest, sendUnaryError, toConnectError } from "./connect-protocol.js";
import { handleProcessService } from "./envd-process.js";
import { handleFilesystemService, handleReadFile, handleWriteFiles, sendRestError } from "./envd-filesystem.js";
import { handleCodeInterpreterRequest } from "./code-interpreter.js";

/** envd's port inside an E2B sandbox. */
export const ENVD_PORT = 49983;
/** The code interpreter's port inside an E2B sandbox. */
export const CODE_INTERPRETER_PORT = 49999;

/** Handles a request carrying `E2b-Sandbox-Id`. */
export async function handleSandboxRequest(
  sandboxes: Map<string, ContainerSandbox>,
  sandboxId: string,
  url: URL,
  request: IncomingMessage,
  response: ServerResponse,
): Promise<void> {
  const sandbox = sandboxes.get(sandboxId);
  if (!sandbox || sandbox.gone) {
    // E2B's edge proxy answers 502 for a sandbox that is not running; the SDK relies on it.
    sendRestError(response, 502, `The sandbox ${sandboxId} was not found`);
    return;
  }
  sandbox.track(response);
  const port = Number(request.headers["e2b-sandbox-port"] ?? ENVD_PORT);
  if (port === CODE_INTERPRETER_PORT) {
    await handleCodeInterpreterRequest(sandbox, url, request, response);
    return;
  }
  if (port !== ENVD_PORT) {
    sendRestError(response, 502, `The sandbox is running but port ${port} is not open (the emulator serves only envd and the code interpreter)`);
    return;
  }
  await handleEnvdRequest(sandbox, url, request, response);
}

async function handleEnvdRequest(sandbox: ContainerSandbox, url: URL, request: IncomingMessage, response: ServerResponse): Promise<void> {
  const method = request.method ?? "GET";
  if (url.pathname === "/health" && method === "GET") {
    response.writeHead(204);
    response.end();
    return;
  }
  const rpcMatch = /^\/(process\.Process|filesystem\.Filesystem)\/([A-Za-z]+)$/.exec(url.pathname);
  const tokenValid = request.headers["x-access-token"] === sandbox.accessToken;
  if (rpcMatch && method === "POST") {
    try {
      if (!tokenValid) throw new ConnectProtocolError("unauthenticated", "missing or invalid X-Access-Token");
      if (rpcMatch[1] === "process.Process") await handleProcessService(sandbox, rpcMatch[2]!, request, response);
      else await handleFilesystemService(sandbox, rpcMatch[2]!, request, response);
    } catch (error) {
      const connectError = toConnectError(error);
      if (response.headersSent) {
        if (!response.writableEnded) response.end();
        return;
      }
      if (isStreamingRequest(request)) new ServerStream(response).end(connectError);
      else sendUnaryError(response, connectError.code, connectError.message);
    }
    return;
  }
  if (url.pathname === "/files" && (method === "GET" || method === "POST")) {
    if (!tokenValid) {
      sendRestError(response, 401, "missing or invalid X-Access-Token");
      return;
    }
    try {
      if (method === "GET") await handleReadFile(sandbox, url, request, response);
      else await handleWriteFiles(sandbox, url, request, response);
    } catch (error) {
      const status = error instanceof ConnectProtocolError ? 400 : 500;
      sendRestError(response, status, error instanceof Error ? error.message : String(error));
    }
    return;
  }
  sendRestError(response, 404, `envd route ${method} ${url.pathname} is not emulated`);
}
