import { z } from "zod";
import { ProviderError } from "../errors/index.js";
import { throwIfAborted } from "../security/guard.js";
import { validate } from "../security/validate.js";
import type { SandboxDriverV1 } from "../v1/provider.js";
import { sandboxSnapshotSchema, type SandboxSnapshot } from "../v1/snapshots.js";
import type { SandboxState } from "./sandbox-state.js";

const snapshotOptionsSchema = z
  .object({
    signal: z.custom<AbortSignal>((value) => value === undefined || value instanceof AbortSignal, "must be an AbortSignal").optional(),
  })
  .strict();

/**
 * `sandbox.snapshot({ signal })` (ADR 0056): refused without `SNAPSHOTS` (naming the backends that have it); otherwise
 * the driver takes a filesystem snapshot and core checks its answer (`sandboxSnapshotSchema`, the sandbox's backend):
 * a malformed answer is `ProviderError`, never passed on.
 */
export function createSandboxSnapshot(
  state: SandboxState,
  driver: SandboxDriverV1,
): (options?: { signal?: AbortSignal }) => Promise<SandboxSnapshot> {
  return async (options = {}) => {
    state.requireCapability("SNAPSHOTS");
    const { signal } = validate(snapshotOptionsSchema, options, "options");
    throwIfAborted(signal, state.backend);
    state.ensureOpen("snapshot");
    const snapshot = driver.snapshot?.bind(driver);
    if (!snapshot)
      throw new ProviderError({ backend: state.backend, message: `The ${state.backend} driver declares SNAPSHOTS but has no snapshot.` });
    const answer = await state.call("take a snapshot", () => snapshot({ signal }));
    const parsed = sandboxSnapshotSchema.safeParse(answer);
    if (!parsed.success || parsed.data.backend !== state.backend)
      throw new ProviderError({
        backend: state.backend,
        message: `The ${state.backend} backend answered the snapshot with something that is not a ${state.backend} snapshot: ${parsed.success ? `backend ${JSON.stringify(parsed.data.backend)}` : (parsed.error.issues[0]?.message ?? "invalid")}.`,
      });
    return parsed.data;
  };
}
