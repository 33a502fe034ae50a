import { TimeoutError } from "../errors/index.js";
import { killWithinGrace, withinTime } from "../limits/deadline.js";
import { isSandboxNotFound, type SandboxState } from "./sandbox-state.js";

/** Default time `kill()` waits for the backend to destroy the sandbox: 30 s. */
export const DEFAULT_DESTROY_TIMEOUT_MS = 30_000;

/**
 * `sandbox.kill()`: destroys the sandbox once, however often it is called. Bounded: live processes get the kill
 * grace, the backend's destroy gets `destroyTimeoutMs`, after which `kill()` rejects with `TimeoutError` (the sandbox
 * is marked closed either way). A lost sandbox is already gone: `kill()` resolves.
 */
export function createSandboxKill(state: SandboxState): () => Promise<void> {
  const { driver, backend, killGraceMs } = state;
  const destroyTimeoutMs = state.context.destroyTimeoutMs ?? DEFAULT_DESTROY_TIMEOUT_MS;
  return async function kill(): Promise<void> {
    if (!state.killing) {
      state.closedAt ??= new Date().toISOString();
      state.endWatch.end("killed");
      state.killing = (async () => {
        for (const end of [...state.liveWatches.values()]) end();
        state.liveWatches.clear();
        const processKills = Promise.allSettled([...state.liveProcesses].map((process) => killWithinGrace(() => process.kill(), killGraceMs)));
        const destroying = state
          .call("kill the sandbox", () => driver.destroy(), { method: "destroy" })
          .catch((error: unknown) => {
            if (state.lost || isSandboxNotFound(error)) return;
            throw error;
          });
        await withinTime(
          destroying,
          destroyTimeoutMs,
          () =>
            new TimeoutError({
              backend,
              timeoutMs: destroyTimeoutMs,
              killed: false,
              message: `The ${backend} backend did not confirm within ${destroyTimeoutMs} ms that sandbox ${driver.id} was destroyed; it may keep running until its lifetime ends.`,
            }),
        );
        await processKills;
      })();
    }
    return state.killing;
  };
}
