/**
 * Kubernetes `Status` objects, as the API server sends them for failures (404, 409, 410, 422) and for the exit status
 * on the exec stream's status channel.
 */
import type { ServerResponse } from "node:http";

/** The `reason` values the emulator uses, as the real API server spells them. */
export type StatusReason =
  "NotFound" | "AlreadyExists" | "Conflict" | "Gone" | "Invalid" | "BadRequest" | "MethodNotAllowed" | "Forbidden" | "Expired";

/** A failure `Status` object (`kind: Status`, `status: Failure`). */
export function failureStatus(options: { code: number; reason: StatusReason; message: string; name?: string; kind?: string; group?: string }) {
  return {
    kind: "Status",
    apiVersion: "v1",
    metadata: {},
    status: "Failure",
    message: options.message,
    reason: options.reason,
    details: options.name === undefined ? undefined : { name: options.name, ...(options.group ? { group: options.group } : {}), kind: options.kind },
    code: options.code,
  };
}

/** Sends a JSON body with a status code. */
export function sendJson(response: ServerResponse, code: number, body: unknown): void {
  const text = JSON.stringify(body);
  response.writeHead(code, { "content-type": "application/json", "content-length": Buffer.byteLength(text) });
  response.end(text);
}

/** Sends a failure `Status` with its code. */
export function sendFailure(response: ServerResponse, options: Parameters<typeof failureStatus>[0]): void {
  sendJson(response, options.code, failureStatus(options));
}

/** The status-channel message of a finished exec: `Success` for exit 0, else `NonZeroExitCode` with the code as a cause. */
export function execExitStatus(exitCode: number, command: readonly string[]) {
  if (exitCode === 0) return { metadata: {}, status: "Success" };
  return {
    metadata: {},
    status: "Failure",
    message: `command terminated with non-zero exit code: error executing command [${command.join(" ")}], exit code ${exitCode}`,
    reason: "NonZeroExitCode",
    details: { causes: [{ reason: "ExitCode", message: String(exitCode) }] },
  };
}
