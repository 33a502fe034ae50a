import { z } from "zod";
import { ProviderError } from "../errors/index.js";
import { validate } from "../security/validate.js";
import { throwIfAborted } from "../security/guard.js";
import type { PolicyRecord } from "../v1/audit.js";
import type { SandboxDriverV1 } from "../v1/provider.js";
import type { SandboxState } from "./sandbox-state.js";

const setLifetimeOptionsSchema = z
  .object({
    timeoutMs: z
      .number()
      .int()
      .min(1_000)
      .max(7 * 24 * 3600 * 1000),
    signal: z.custom<AbortSignal>((value) => value === undefined || value instanceof AbortSignal, "must be an AbortSignal").optional(),
  })
  .strict();

/** One lifetime change, as the audit record keeps it. */
interface LifetimeChange {
  readonly at: string;
  readonly timeoutMs: number;
  readonly requestedExpiresAt: string;
  readonly appliedExpiresAt: string;
}

/** `sandbox.setLifetime()` and the audit record of the changes it made (ADR 0050). */
export interface SandboxLifetime {
  /** Sets the remaining lifetime to `timeoutMs` from now. */
  readonly setLifetime: (options: { timeoutMs: number; signal?: AbortSignal }) => Promise<{ expiresAt: string }>;
  /** The `policies.lifetimeChanges` record, or undefined before any change. */
  auditRecord(): PolicyRecord | undefined;
}

/**
 * `sandbox.setLifetime({ timeoutMs })`: refused without `SET_LIFETIME` (naming the backends that have it); otherwise
 * the driver moves the sandbox's end, out of the sandbox's reach, and answers the end it applied, which core records
 * (each change: when, what was asked, what was applied) and gives the sandbox's credentials as their new revocation time.
 */
export function createSandboxLifetime(state: SandboxState, driver: SandboxDriverV1): SandboxLifetime {
  const changes: LifetimeChange[] = [];
  return {
    setLifetime: async (options) => {
      state.requireCapability("SET_LIFETIME");
      const { timeoutMs, signal } = validate(setLifetimeOptionsSchema, options, "options");
      throwIfAborted(signal, state.backend);
      state.ensureOpen("setLifetime", { whilePaused: true });
      const setLifetime = driver.setLifetime?.bind(driver);
      if (!setLifetime)
        throw new ProviderError({ backend: state.backend, message: `The ${state.backend} driver declares SET_LIFETIME but has no setLifetime.` });
      const at = new Date();
      const requestedExpiresAt = new Date(at.getTime() + timeoutMs).toISOString();
      const applied = await state.call("set the sandbox's lifetime", () => setLifetime({ expiresAt: requestedExpiresAt, signal }));
      const appliedExpiresAt = typeof applied?.expiresAt === "string" && !Number.isNaN(Date.parse(applied.expiresAt)) ? applied.expiresAt : null;
      if (appliedExpiresAt === null)
        throw new ProviderError({
          backend: state.backend,
          message: `The ${state.backend} backend did not say which end it applied to the sandbox's lifetime.`,
        });
      changes.push({ at: at.toISOString(), timeoutMs, requestedExpiresAt, appliedExpiresAt });
      state.context.credentials?.watchLifetime?.(Date.parse(appliedExpiresAt));
      // Core's own end (ADR 0045: `closed` and `ended` at the lifetime's end) moves with the backend's.
      state.endWatch.moveLifetimeEnd(Date.parse(appliedExpiresAt));
      return { expiresAt: appliedExpiresAt };
    },
    auditRecord: () => {
      if (changes.length === 0) return undefined;
      return {
        requested: changes.map((change) => ({ at: change.at, timeoutMs: change.timeoutMs, expiresAt: change.requestedExpiresAt })),
        applied: changes.map((change) => ({ at: change.at, expiresAt: change.appliedExpiresAt })),
        enforcement:
          "sandbox.setLifetime: the backend moved the sandbox's end from the host, out of the sandbox's reach (see policies.lifetime for how the end is enforced)",
      };
    },
  };
}
