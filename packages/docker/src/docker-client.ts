import Docker from "dockerode";
import { BackendUnavailableError } from "@sbx/core";
import { describeEndpoint, type EngineEndpoint } from "./settings.js";

/** Makes a dockerode client for an endpoint. */
export function createDockerClient(endpoint: EngineEndpoint): Docker {
  return endpoint.kind === "socket"
    ? new Docker({ socketPath: endpoint.socketPath })
    : new Docker({ host: endpoint.host, port: endpoint.port, protocol: "http" });
}

/** What to do when the engine is unreachable. */
export function engineRemedy(endpoint: EngineEndpoint): string {
  return `Start Docker (Linux: \`sudo systemctl start docker\` or run \`dockerd\`; macOS/Windows: open Docker Desktop), or point sbx at a running engine with DOCKER_HOST or settings.socketPath (tried ${describeEndpoint(endpoint)}).`;
}

/** Backends that work without a local engine. */
export const ALTERNATIVE_BACKENDS = ["e2b (set E2B_API_KEY; hosted microVMs)", "fake (pass allowFake: true; not a security boundary)"];

const CONNECTION_ERROR_CODES = new Set(["ECONNREFUSED", "ENOENT", "EACCES", "ECONNRESET", "EHOSTUNREACH", "ENOTFOUND", "ETIMEDOUT", "EPIPE"]);

/** True for errors meaning the engine could not be reached at all (as opposed to an API error). */
export function isConnectionError(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === "string" && CONNECTION_ERROR_CODES.has(code);
}

/** The error raised when the engine cannot be reached: names the socket, how to start Docker and the alternatives. */
export function engineUnavailable(endpoint: EngineEndpoint, cause: unknown): BackendUnavailableError {
  const detail = (cause as { code?: string; message?: string } | null)?.code ?? (cause instanceof Error ? cause.message : String(cause));
  return new BackendUnavailableError({
    backend: "docker",
    cause,
    remedy: engineRemedy(endpoint),
    alternatives: ALTERNATIVE_BACKENDS,
    message: `Cannot reach the Docker Engine at ${describeEndpoint(endpoint)} (${detail}). ${engineRemedy(endpoint)} Backends that work without Docker: ${ALTERNATIVE_BACKENDS.join("; ")}.`,
  });
}

/** HTTP status of a dockerode error, if any. */
export function statusCodeOf(error: unknown): number | undefined {
  const status = (error as { statusCode?: unknown } | null)?.statusCode;
  return typeof status === "number" ? status : undefined;
}

/** The engine's message from a dockerode error (its JSON body), or the error message. */
export function engineMessage(error: unknown): string {
  const json = (error as { json?: { message?: string } } | null)?.json;
  if (json && typeof json.message === "string") return json.message;
  return error instanceof Error ? error.message : String(error);
}
