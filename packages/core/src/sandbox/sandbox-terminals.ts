import { AbortedError, TimeoutError } from "../errors/index.js";
import { CallbackGuard } from "../limits/callback-guard.js";
import { toBytes } from "../limits/data-input.js";
import { killWithinGrace, type KillOutcome } from "../limits/deadline.js";
import { terminalOptionsSchema, terminalSizeSchema } from "../v1/options.js";
import type { DriverTerminal } from "../v1/provider.js";
import type { SandboxTerminals, Terminal, TerminalExit, TerminalOptions } from "../v1/sandbox.js";
import { throwIfAborted } from "../security/guard.js";
import { resolveWorkingDirectory } from "../security/paths.js";
import { redactError } from "../security/redaction.js";
import { validate } from "../security/validate.js";
import type { SandboxState } from "./sandbox-state.js";

/** The command a terminal runs by default: the user's shell, interactive. */
const DEFAULT_TERMINAL_COMMAND = 'exec "${SHELL:-/bin/sh}" -i';

/** What ended a terminal before its own exit, when something did. */
type StopCause = { readonly kind: "timeout" | "abort" | "callback"; readonly kill: Promise<KillOutcome> };

/**
 * `sandbox.terminals` (ADR 0049): checks `PTY`, starts the driver's terminal with core's environment, holds it among
 * the sandbox's live processes (it dies with the sandbox), and turns a timeout, an abort or a throwing `onData` into a
 * verified kill and a typed rejection of `wait()`. The exit code is the backend's, never assumed.
 */
export function createSandboxTerminals(state: SandboxState): SandboxTerminals {
  const { driver, backend, killGraceMs } = state;
  return {
    async create(rawOptions: TerminalOptions): Promise<Terminal> {
      state.ensureOpen("open a terminal");
      state.requireCapability("PTY");
      const options = validate(terminalOptionsSchema, rawOptions, "options");
      throwIfAborted(options.signal, backend);
      const openTerminal = driver.openTerminal;
      if (!openTerminal) state.requireCapability("PTY", "the driver has no openTerminal method");
      const cwd = state.redacting(() => resolveWorkingDirectory(options.cwd, driver.workspace, backend));
      let stopCause: StopCause | undefined;
      let terminal: DriverTerminal | undefined;
      const stop = (kind: StopCause["kind"]) => {
        if (stopCause || !terminal) return;
        const running = terminal;
        stopCause = { kind, kill: killWithinGrace(() => running.kill(), killGraceMs) };
      };
      const guard = new CallbackGuard(backend, () => stop("callback"));
      const onData = guard.wrap("onData", options.onData);
      const releaseStartingSlot = state.reserveProcess();
      const startedAt = Date.now();
      try {
        terminal = await state.call(
          "open a terminal",
          () =>
            openTerminal!({
              command: options.command ?? DEFAULT_TERMINAL_COMMAND,
              cwd,
              env: { TERM: "xterm-256color", ...state.spawnEnvironment, ...(options.env ?? {}) },
              cols: options.cols ?? 80,
              rows: options.rows ?? 24,
              onData: (chunk) => onData(chunk),
            }),
          { method: "spawn", detail: options.command ?? "(terminal)" },
        );
      } finally {
        releaseStartingSlot();
      }
      const running = terminal;
      state.liveProcesses.add(running);
      const timer = options.timeoutMs === undefined ? undefined : setTimeout(() => stop("timeout"), options.timeoutMs);
      const onAbort = () => stop("abort");
      options.signal?.addEventListener("abort", onAbort, { once: true });
      if (guard.failure) stop("callback");
      const finished: Promise<TerminalExit> = (async () => {
        try {
          const exit = await state.call("wait for a terminal", () => running.exit);
          if (stopCause) await reportStop(stopCause, options.timeoutMs ?? 0);
          return { exitCode: exit.exitCode, durationMs: Date.now() - startedAt, outOfMemoryKilled: exit.outOfMemoryKilled ?? null };
        } catch (error) {
          if (stopCause) await reportStop(stopCause, options.timeoutMs ?? 0);
          throw redactError(error, state.secretValues);
        } finally {
          if (timer) clearTimeout(timer);
          options.signal?.removeEventListener("abort", onAbort);
          state.liveProcesses.delete(running);
        }
      })();
      finished.catch(() => {});

      /** Throws the typed error of a terminal sbx stopped (timeout, abort, callback), saying whether the kill was verified. */
      async function reportStop(cause: StopCause, timeoutMs: number): Promise<never> {
        const outcome = await cause.kill;
        if (cause.kind === "callback") throw guard.failure!;
        if (cause.kind === "abort")
          throw new AbortedError({ backend, cause: options.signal?.reason, message: "The caller aborted the terminal; it was killed." });
        throw new TimeoutError({
          backend,
          timeoutMs,
          killed: outcome.verified,
          message: `The terminal ran past ${timeoutMs} ms and ${outcome.verified ? "was killed (verified by the backend)" : `could not be verified killed: ${outcome.detail}`}.`,
        });
      }

      let killing: Promise<void> | undefined;
      return {
        pid: running.pid,
        write: async (data) => {
          state.ensureOpen("write to a terminal");
          await state.call("write to a terminal", () => running.writeStdin(toBytes(data)));
        },
        resize: async (size) => {
          state.ensureOpen("resize a terminal");
          const valid = validate(terminalSizeSchema, size, "size");
          await state.call("resize a terminal", () => running.resize(valid));
        },
        kill: () =>
          (killing ??= state
            .call("kill a terminal", () => running.kill())
            .then(async () => {
              await finished.catch(() => undefined);
            })),
        wait: () => finished,
      };
    },
  };
}
