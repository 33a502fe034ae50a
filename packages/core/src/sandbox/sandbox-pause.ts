import { z } from "zod";
import { ProviderError } from "../errors/index.js";
import { validate } from "../security/validate.js";
import { throwIfAborted } from "../security/guard.js";
import type { PolicyRecord } from "../v1/audit.js";
import type { SandboxDriverV1 } from "../v1/provider.js";
import type { SandboxState } from "./sandbox-state.js";

const pauseOptionsSchema = z
  .object({
    signal: z.custom<AbortSignal>((value) => value === undefined || value instanceof AbortSignal, "must be an AbortSignal").optional(),
  })
  .strict();

/** One pause or resume, as the audit record keeps it. */
interface PauseChange {
  readonly action: "pause" | "resume";
  /** When it was asked. */
  readonly at: string;
  /** When the backend confirmed it. */
  readonly completedAt: string;
}

/** `sandbox.pause()`, `sandbox.resume()`, `sandbox.paused` and the audit record of the pauses (ADR 0055). */
export interface SandboxPause {
  /** Pauses the sandbox (see `Sandbox.pause`). */
  readonly pause: (options?: { signal?: AbortSignal }) => Promise<void>;
  /** Resumes the sandbox (see `Sandbox.resume`). */
  readonly resume: (options?: { signal?: AbortSignal }) => Promise<void>;
  /** True while paused or being paused. */
  readonly isPaused: () => boolean;
  /** The `policies.pauses` record, or undefined before the first pause. */
  auditRecord(): PolicyRecord | undefined;
}

/** The agent client's heartbeat hold, when the driver's agent has one (the pool's `withCodeAgent` drivers carry it as `agent`). */
interface HeartbeatHolder {
  holdHeartbeat(held: boolean): void;
}

/**
 * `sandbox.pause()` / `resume()`: refused without `PAUSE` (naming the backends that have it). The paused state lives in
 * the call channel (`DriverChannel.paused`), whose `ensureOpen` is the one gate every command, code, file, watch and
 * terminal call passes: it is set **before** the backend is asked, so no call can start while the processes are being
 * stopped, and cleared only once the backend confirmed the resume (or the pause failed, the backend having left the
 * sandbox running). The sbx agent's heartbeat is held while paused (a stopped agent cannot answer pings; without the
 * hold it would be killed as hung after 10 s). One change at a time: a pause and a resume asked together run in order.
 * Core's lifetime timer, the credentials' revocation and the backend's deadline are not touched: the clock runs.
 */
export function createSandboxPause(state: SandboxState, givenDriver: SandboxDriverV1): SandboxPause {
  const changes: PauseChange[] = [];
  let enforcement = "";
  let queue: Promise<unknown> = Promise.resolve();
  const channel = state.driver;
  const heartbeat = (): HeartbeatHolder | undefined => {
    const agent = channel.agent ?? (givenDriver as { agent?: unknown }).agent;
    return agent !== null && typeof agent === "object" && typeof (agent as Partial<HeartbeatHolder>).holdHeartbeat === "function"
      ? (agent as HeartbeatHolder)
      : undefined;
  };
  const missing = (name: string) =>
    new ProviderError({ backend: state.backend, message: `The ${state.backend} driver declares PAUSE but has no ${name}.` });
  const inOrder = <Result>(work: () => Promise<Result>): Promise<Result> => {
    const next = queue.then(work, work);
    queue = next.catch(() => {});
    return next;
  };

  const pause = async (options: { signal?: AbortSignal } = {}): Promise<void> => {
    state.requireCapability("PAUSE");
    const { signal } = validate(pauseOptionsSchema, options, "options");
    throwIfAborted(signal, state.backend);
    const driverPause = givenDriver.pause?.bind(givenDriver);
    if (!driverPause) throw missing("pause");
    return inOrder(async () => {
      if (channel.paused) {
        state.ensureOpen("pause", { whilePaused: true });
        return;
      }
      state.ensureOpen("pause");
      const at = new Date().toISOString();
      channel.paused = true;
      heartbeat()?.holdHeartbeat(true);
      try {
        const answer: unknown = await state.call("pause the sandbox", () => driverPause({ signal }));
        const told = (answer as { enforcement?: unknown } | undefined)?.enforcement;
        if (typeof told === "string") enforcement = told;
      } catch (error) {
        // The backend leaves a sandbox it could not pause running (the driver's contract): so does core.
        channel.paused = false;
        heartbeat()?.holdHeartbeat(false);
        throw error;
      }
      changes.push({ action: "pause", at, completedAt: new Date().toISOString() });
    });
  };

  const resume = async (options: { signal?: AbortSignal } = {}): Promise<void> => {
    state.requireCapability("PAUSE");
    const { signal } = validate(pauseOptionsSchema, options, "options");
    throwIfAborted(signal, state.backend);
    const driverResume = givenDriver.resume?.bind(givenDriver);
    if (!driverResume) throw missing("resume");
    return inOrder(async () => {
      state.ensureOpen("resume", { whilePaused: true });
      if (!channel.paused) return;
      const at = new Date().toISOString();
      // A failed resume leaves the sandbox paused: nothing says its processes run.
      await state.call("resume the sandbox", () => driverResume({ signal }));
      channel.paused = false;
      heartbeat()?.holdHeartbeat(false);
      changes.push({ action: "resume", at, completedAt: new Date().toISOString() });
    });
  };

  return {
    pause,
    resume,
    isPaused: () => channel.paused,
    auditRecord: () => {
      if (changes.length === 0) return undefined;
      return {
        requested: changes.map((change) => ({ action: change.action, at: change.at })),
        applied: changes.map((change) => ({ action: change.action, at: change.at, completedAt: change.completedAt })),
        enforcement: `sandbox.pause: ${enforcement || "the backend stopped every process of the sandbox"}; while paused sbx refuses commands, code, file calls and terminal input (SBX_SANDBOX_PAUSED); the lifetime keeps running (see policies.lifetime)`,
      };
    },
  };
}
