import { BackendUnavailableError, InvalidArgumentError, ProviderError, RuntimeMissingError, SandboxNotFoundError, SbxError } from "@sbx/core";
import { describeEndpoint, type EngineEndpoint } from "./docker-settings.js";

/** Backends that work without a local engine. */
export const ALTERNATIVE_BACKENDS = ["e2b (set E2B_API_KEY; hosted microVMs)", "fake (pass allowFake: true; not a security boundary)"];

const CONNECTION_ERROR_CODES = new Set(["ECONNREFUSED", "ENOENT", "EACCES", "ECONNRESET", "EHOSTUNREACH", "ENOTFOUND", "ETIMEDOUT", "EPIPE"]);

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

/** Engine-internal host paths (overlay2 merged dirs, volume mount points) never reach a caller's message. */
export function scrubHostPaths(message: string): string {
  return message.replace(/\/var\/lib\/(?:docker|containerd)\/[^\s"':]*/g, "<engine path>");
}

/** True for errors meaning the engine could not be reached at all (as opposed to an API error). */
export function isConnectionError(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === "string" && CONNECTION_ERROR_CODES.has(code);
}

/** What to do when the engine is unreachable. */
export function engineRemedy(endpoint: EngineEndpoint): string {
  return `Start Docker (Linux: \`sudo systemctl start docker\` or run \`dockerd\`; macOS/Windows: open Docker Desktop), or point sbx at a running engine with DOCKER_HOST or settings.socketPath (tried ${describeEndpoint(endpoint)}).`;
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

/**
 * True when an engine error means the container itself is gone or no longer running (removed out of band, its
 * lifetime ended, or sbx ended it): 404 "No such container", 409 "is not running" / "marked for removal".
 */
export function isContainerGoneError(error: unknown): boolean {
  if (SbxError.isInstance(error)) return false;
  const status = statusCodeOf(error);
  const message = engineMessage(error);
  if (status === 404 && /no such container/i.test(message)) return true;
  if (status === 409 && /is not running|marked for removal|is restarting|removal .* in progress/i.test(message)) return true;
  return false;
}

/** The one error every operation raises once the sandbox's container is gone. */
export function sandboxLost(sandboxId: string, detail: string, cause?: unknown): SandboxNotFoundError {
  return new SandboxNotFoundError({
    backend: "docker",
    sandboxId,
    cause,
    message: `The Docker sandbox ${sandboxId.slice(0, 12)} is gone (${detail}): its processes and files no longer exist. Create a new sandbox.`,
  });
}

/** The `SandboxNotFoundError` of `connect` for a container the engine does not have. */
export function noSuchSandbox(sandboxId: string): SandboxNotFoundError {
  return new SandboxNotFoundError({
    backend: "docker",
    sandboxId,
    message: `No Docker sandbox ${sandboxId}: it expired, was killed, or never existed.`,
  });
}

/** An engine failure of a running sandbox's operation, as `ProviderError` (a typed sbx error passes unchanged). */
export function engineFailure(error: unknown): Error {
  if (SbxError.isInstance(error)) return error;
  return new ProviderError({ backend: "docker", cause: error, message: `The Docker Engine failed: ${scrubHostPaths(engineMessage(error))}` });
}

/** Maps an engine error at create time to a typed sbx error. */
export function mapCreateError(
  error: unknown,
  endpoint: EngineEndpoint,
  policy: { readonly image: string; readonly networkMode: string; readonly runtime: string | undefined },
): Error {
  if (SbxError.isInstance(error)) return error;
  if (isConnectionError(error)) return engineUnavailable(endpoint, error);
  const message = engineMessage(error);
  if (/network .* not found/i.test(message)) {
    return new InvalidArgumentError({
      field: "settings.bridgeNetwork",
      backend: "docker",
      cause: error,
      message: `Invalid settings.bridgeNetwork: the Docker network ${JSON.stringify(policy.networkMode)} does not exist (${message}). Create it with \`docker network create ${policy.networkMode}\` or pass an existing one.`,
    });
  }
  if (/runtime/i.test(message) && policy.runtime) {
    return new InvalidArgumentError({
      field: "settings.runtime",
      backend: "docker",
      cause: error,
      message: `Invalid settings.runtime: the engine does not know runtime ${JSON.stringify(policy.runtime)} (${message}). Install it (gVisor: \`apt-get install runsc\`, then add it to /etc/docker/daemon.json "runtimes") and reload the engine.`,
    });
  }
  return new ProviderError({
    backend: "docker",
    cause: error,
    message: `The Docker Engine refused to create the sandbox from ${JSON.stringify(policy.image)}: ${message}`,
  });
}

/** Maps a failure to start the allowlist forwarder: python3 missing in the image is `RuntimeMissingError`. */
export function mapEgressStartError(error: unknown): Error {
  if (SbxError.isInstance(error)) return error;
  const message = error instanceof Error ? error.message : String(error);
  if (/python3.*(not found|no such file)|executable file not found/i.test(message)) {
    return new RuntimeMissingError({
      backend: "docker",
      runtime: "python3",
      message: `network.allow on Docker needs python3 in the image (the egress forwarder is a small Python program): ${scrubHostPaths(message)}. Use an image with python3, or egress "deny" without an allowlist.`,
    });
  }
  return new ProviderError({ backend: "docker", cause: error, message: `The egress allowlist forwarder did not start: ${scrubHostPaths(message)}` });
}
