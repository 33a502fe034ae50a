/**
 * E2B's control-plane REST API (`/sandboxes`, `/v2/sandboxes`, …) plus the
 * emulator-only `GET /_emulator/sandboxes/{id}` introspection route.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { readBody } from "./connect-protocol.js";
import { ContainerSandbox, EMULATED_ENVD_VERSION } from "./container-sandbox.js";
import { planNetworkPolicy, UnsupportedNetworkPolicyError, type RequestedNetwork } from "./network-policy.js";
import type Docker from "dockerode";
import type { WarmContainerPool } from "@sbx/emulator-kit";
import type { PreparedContainer } from "./sandbox-container.js";

/** State the control plane works on. */
export interface ControlPlaneContext {
  docker: Docker;
  image: string;
  instanceId: string;
  networkName: string;
  apiKey: string;
  maxTimeoutSeconds: number;
  sandboxes: Map<string, ContainerSandbox>;
  /** False once stop() began: creating is refused. */
  accepting: () => boolean;
  /** Containers prepared ahead of demand (ADR 0041). */
  warmContainers?: WarmContainerPool<PreparedContainer>;
}

/** Writes an API error as JSON `{code, message}` (the SDK branches on `code`). */
export function sendApiError(response: ServerResponse, status: number, message: string): void {
  const body = JSON.stringify({ code: status, message });
  response.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(body) });
  response.end(body);
}

/** Answers 204 No Content, as the API does for kill, timeout and refresh. */
function sendNoContent(response: ServerResponse): void {
  response.writeHead(204);
  response.end();
}

function sendJson(response: ServerResponse, status: number, value: unknown, headers: Record<string, string> = {}): void {
  const body = JSON.stringify(value);
  response.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(body), ...headers });
  response.end(body);
}

async function readJson<T>(request: IncomingMessage): Promise<T> {
  const text = (await readBody(request, 1024 * 1024)).toString("utf8");
  return (text ? JSON.parse(text) : {}) as T;
}

/** The `Sandbox` shape returned by create and connect. */
function sandboxResponse(sandbox: ContainerSandbox) {
  return {
    sandboxID: sandbox.id,
    templateID: sandbox.templateId,
    clientID: sandbox.clientId,
    envdVersion: EMULATED_ENVD_VERSION,
    envdAccessToken: sandbox.accessToken,
    domain: null,
  };
}

/** The `ListedSandbox`/`SandboxDetail` shape. */
function sandboxDetail(sandbox: ContainerSandbox) {
  return {
    sandboxID: sandbox.id,
    templateID: sandbox.templateId,
    clientID: sandbox.clientId,
    envdVersion: EMULATED_ENVD_VERSION,
    envdAccessToken: sandbox.accessToken,
    startedAt: sandbox.startedAt.toISOString(),
    endAt: sandbox.endAt.toISOString(),
    state: "running",
    cpuCount: 2,
    memoryMB: 512,
    diskSizeMB: 1024,
    metadata: sandbox.metadata,
    allowInternetAccess: sandbox.allowInternetAccess,
    network: sandbox.requestedNetwork,
    domain: null,
    volumeMounts: [],
  };
}

interface CreateBody {
  templateID?: string;
  timeout?: number;
  metadata?: Record<string, string>;
  envVars?: Record<string, string>;
  allow_internet_access?: boolean;
  network?: RequestedNetwork;
  mcp?: unknown;
  volumeMounts?: unknown[];
  autoPause?: boolean;
}

/** Default timeout of `POST /sandboxes` and of the timeout routes when the body has none (openapi `NewSandbox`). */
const API_DEFAULT_TIMEOUT_SECONDS = 15;
/** Default timeout of `POST /v2/sandboxes` (openapi `NewSandboxV2`); e2b 2.51 sends no timeout unless asked. */
const API_V2_DEFAULT_TIMEOUT_SECONDS = 300;

function matchesMetadataQuery(sandbox: ContainerSandbox, query: string | null): boolean {
  if (!query) return true;
  const wanted = new URLSearchParams(query);
  for (const [key, value] of wanted) {
    if (sandbox.metadata[decodeURIComponent(key)] !== decodeURIComponent(value)) return false;
  }
  return true;
}

/** Handles a control-plane request. Returns false when the route is unknown. */
export async function handleControlPlaneRequest(
  context: ControlPlaneContext,
  url: URL,
  request: IncomingMessage,
  response: ServerResponse,
): Promise<boolean> {
  const method = request.method ?? "GET";
  const segments = url.pathname.split("/").filter(Boolean);

  if (segments[0] === "_emulator" && segments[1] === "sandboxes" && segments.length === 3 && method === "GET") {
    const sandbox = context.sandboxes.get(segments[2]!);
    if (!sandbox) sendApiError(response, 404, `sandbox ${segments[2]} not found`);
    else sendJson(response, 200, sandbox.enforcementReport());
    return true;
  }
  if (url.pathname === "/health" && method === "GET") {
    sendJson(response, 200, { status: "ok" });
    return true;
  }

  const versioned = segments[0] === "v2" ? segments.slice(1) : segments;
  if (versioned[0] !== "sandboxes") return false;

  const apiKey = request.headers["x-api-key"];
  if (apiKey !== context.apiKey) {
    sendApiError(response, 401, apiKey ? "Invalid API key" : "Missing API key (X-API-KEY header)");
    return true;
  }

  // POST /sandboxes, POST /v2/sandboxes
  if (versioned.length === 1 && method === "POST") {
    if (!context.accepting()) {
      sendApiError(response, 503, "the emulator is stopping");
      return true;
    }
    const body = await readJson<CreateBody>(request);
    if (body.mcp) {
      sendApiError(response, 400, "mcp is not supported by the E2B emulator");
      return true;
    }
    if (body.volumeMounts && body.volumeMounts.length > 0) {
      sendApiError(response, 400, "volume mounts are not supported by the E2B emulator");
      return true;
    }
    let plan;
    try {
      plan = planNetworkPolicy(body.allow_internet_access, body.network);
    } catch (error) {
      if (error instanceof UnsupportedNetworkPolicyError) {
        sendApiError(response, 400, error.message);
        return true;
      }
      throw error;
    }
    const sandbox = await ContainerSandbox.start({
      docker: context.docker,
      image: context.image,
      instanceId: context.instanceId,
      networkName: context.networkName,
      templateId: body.templateID ?? "base",
      timeoutSeconds: body.timeout ?? (segments[0] === "v2" ? API_V2_DEFAULT_TIMEOUT_SECONDS : API_DEFAULT_TIMEOUT_SECONDS),
      maxTimeoutSeconds: context.maxTimeoutSeconds,
      metadata: body.metadata ?? {},
      environment: body.envVars ?? {},
      plan,
      allowInternetAccess: body.allow_internet_access,
      requestedNetwork: body.network,
      onGone: (gone) => context.sandboxes.delete(gone.id),
      warmContainers: context.warmContainers,
    });
    context.sandboxes.set(sandbox.id, sandbox);
    if (!context.accepting()) {
      await sandbox.kill();
      sendApiError(response, 503, "the emulator is stopping");
      return true;
    }
    sendJson(response, 201, sandboxResponse(sandbox));
    return true;
  }

  // GET /sandboxes, GET /v2/sandboxes
  if (versioned.length === 1 && method === "GET") {
    const states = url.searchParams.getAll("state").flatMap((value) => value.split(","));
    const includeRunning = states.length === 0 || states.includes("running");
    const metadataQuery = url.searchParams.get("metadata");
    const listed = includeRunning
      ? [...context.sandboxes.values()].filter((sandbox) => matchesMetadataQuery(sandbox, metadataQuery)).map(sandboxDetail)
      : [];
    sendJson(response, 200, listed);
    return true;
  }

  const sandboxId = versioned[1]!;
  const sandbox = context.sandboxes.get(sandboxId);
  const action = versioned[2];
  if (!sandbox) {
    sendApiError(response, 404, `sandbox ${sandboxId} not found`);
    return true;
  }
  if (versioned.length === 2 && method === "GET") {
    sendJson(response, 200, sandboxDetail(sandbox));
    return true;
  }
  if (versioned.length === 2 && method === "DELETE") {
    await sandbox.kill();
    sendNoContent(response);
    return true;
  }
  if (action === "timeout" && method === "POST") {
    const body = await readJson<{ timeout?: number }>(request);
    await sandbox.setTimeout(Number(body.timeout ?? API_DEFAULT_TIMEOUT_SECONDS));
    sendNoContent(response);
    return true;
  }
  if (action === "connect" && method === "POST") {
    const body = await readJson<{ timeout?: number }>(request);
    if (body.timeout !== undefined) {
      const requestedEnd = Date.now() + Number(body.timeout) * 1000;
      if (requestedEnd > sandbox.endAt.getTime()) await sandbox.setTimeout(Number(body.timeout));
    }
    sendJson(response, 200, sandboxResponse(sandbox));
    return true;
  }
  if (action === "refreshes" && method === "POST") {
    const body = await readJson<{ duration?: number }>(request);
    await sandbox.setTimeout(Number(body.duration ?? API_DEFAULT_TIMEOUT_SECONDS));
    sendNoContent(response);
    return true;
  }
  if (action === "metrics" && method === "GET") {
    sendJson(response, 200, []);
    return true;
  }
  if (action === "pause" || action === "resume") {
    sendApiError(response, 501, "pause/resume is not supported by the E2B emulator");
    return true;
  }
  sendApiError(response, 404, `no route ${method} ${url.pathname}`);
  return true;
}
