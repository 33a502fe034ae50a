import type { Sandbox as CodeInterpreterSandbox } from "@e2b/code-interpreter";
import { ProviderError } from "@sbx/core";
import { mapE2BError } from "./map-e2b-error.js";

/** E2B's shortest timeout, in ms: it works in whole seconds and refuses 0. */
const SHORTEST_E2B_TIMEOUT_MS = 1_000;

/**
 * Moves an E2B sandbox's end (`SET_LIFETIME`, ADR 0057): E2B's `setTimeout` sets the remaining lifetime from now, out of
 * the sandbox's reach (E2B's control plane kills the VM at its end); the end E2B applied is read back with `getInfo`
 * (E2B may cut it to the account tier's maximum) and answered, never the end asked.
 */
export async function setE2BLifetime(
  sandbox: CodeInterpreterSandbox,
  request: { expiresAt: string; signal?: AbortSignal },
  requestTimeoutMs: number | undefined,
): Promise<{ expiresAt: string }> {
  const timeoutMs = Math.max(SHORTEST_E2B_TIMEOUT_MS, Date.parse(request.expiresAt) - Date.now());
  try {
    await sandbox.setTimeout(timeoutMs, { requestTimeoutMs, signal: request.signal });
    const info = await sandbox.getInfo({ requestTimeoutMs, signal: request.signal });
    if (!(info.endAt instanceof Date) || Number.isNaN(info.endAt.getTime()))
      throw new ProviderError({ backend: "e2b", message: "E2B did not report the sandbox's end after setTimeout." });
    return { expiresAt: info.endAt.toISOString() };
  } catch (error) {
    if (error instanceof ProviderError) throw error;
    throw mapE2BError(error, { operation: "set the sandbox's lifetime", sandboxId: sandbox.sandboxId, timeoutMs: requestTimeoutMs });
  }
}
