import { SandboxNotFoundError, SbxError } from "@sbx/core";
import { withinTime } from "@sbx/core/adapter";
import type Docker from "dockerode";
import { engineMessage, statusCodeOf } from "./docker-client.js";

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

/** Asks the engine whether the container still runs; false when it is gone or stopped, undefined if the engine did not answer. */
export async function containerRunning(container: Docker.Container, timeoutMs = 5000): Promise<boolean | undefined> {
  try {
    // Bounded: the engine can hold a container's lock for long (an exec into a paused container never starts).
    const inspect = await withinTime(container.inspect(), timeoutMs, () => undefined);
    if (!inspect) return undefined;
    return inspect.State.Running === true;
  } catch (error) {
    if (statusCodeOf(error) === 404) return false;
    return undefined;
  }
}

/** Engine-internal host paths (overlay2 merged dirs, volume mount points) never reach a caller's message. */
export function scrubHostPaths(message: string): string {
  return message.replace(/\/var\/lib\/(?:docker|containerd)\/[^\s"':]*/g, "<engine path>");
}
