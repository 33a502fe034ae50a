/**
 * Terminals on E2B (`PTY`, ADR 0054): envd's process API in PTY mode, the mode the SDK's `sandbox.pty` uses. The
 * SDK's `pty.create` always runs `bash -i -l`; a terminal runs the caller's command, so it is started through the
 * same Connect client `pty.create` uses (`sandbox.pty.rpc`, the one `envd-process-stream.ts` reads commands' bytes
 * with) with the `pty` size field set; input, resize and kill go through the SDK's public `pty` and `commands` methods.
 */
import type { TerminalRequest } from "@sbx/core/adapter";
import { shellQuote } from "@sbx/core/adapter";
import { exitCodeOfEnd, startHeaders, type ProcessStartEvent } from "./envd-process-stream.js";

/** The part of the SDK's envd process client a terminal needs: `Start` with the `pty` field. */
export interface TerminalStartClient {
  start(
    request: {
      process: { cmd: string; args: string[]; envs: Record<string, string> };
      pty: { size: { cols: number; rows: number } };
    },
    options: { headers: Record<string, string>; signal: AbortSignal },
  ): AsyncIterable<ProcessStartEvent>;
}

/** The SDK's `sandbox.pty` client and envd version, or undefined when this SDK version does not expose them. */
export function terminalClientOf(pty: unknown): { client: TerminalStartClient; envdVersion: string } | undefined {
  const candidate = pty as { rpc?: { start?: unknown }; envdVersion?: unknown } | undefined;
  if (!candidate || typeof candidate.rpc?.start !== "function") return undefined;
  return { client: candidate.rpc as TerminalStartClient, envdVersion: typeof candidate.envdVersion === "string" ? candidate.envdVersion : "0.0.0" };
}

/** What starting a terminal needs besides the request. */
export interface StartTerminalOptions {
  /** The user to run as (`undefined`: the template's default user). */
  readonly user: "root" | undefined;
  /** Bounds the wait for envd's start event, in milliseconds, when set. */
  readonly requestTimeoutMs: number | undefined;
}

/**
 * Starts `request.command` on a pseudo-terminal of the asked size, in `request.cwd` (a missing one is the shell's
 * exit 126, as for commands); resolves with the pid once envd sent the start event. `exit` resolves with the exit code
 * of envd's end event (a signal death is 128 + its number), after every output chunk went to `onData`, and rejects
 * when the stream ended without an end event: an exit code is never assumed.
 */
export async function startTerminal(
  client: TerminalStartClient,
  envdVersion: string,
  request: TerminalRequest,
  options: StartTerminalOptions,
): Promise<{ pid: number; exit: Promise<number> }> {
  const controller = new AbortController();
  const started = client.start(
    {
      process: { cmd: "/bin/bash", args: ["-l", "-c", `cd -- ${shellQuote(request.cwd)} || exit 126\n${request.command}`], envs: { ...request.env } },
      pty: { size: { cols: request.cols, rows: request.rows } },
    },
    { headers: startHeaders(envdVersion, options.user), signal: controller.signal },
  );
  const iterator = started[Symbol.asyncIterator]();
  const startTimer = options.requestTimeoutMs ? setTimeout(() => controller.abort(), options.requestTimeoutMs) : undefined;
  let pid: number;
  try {
    const first = await iterator.next();
    const event = first.value?.event?.event;
    if (first.done || event?.case !== "start") throw new Error("envd did not send the process start event first");
    pid = Number(event.value.pid);
  } catch (error) {
    controller.abort();
    throw error;
  } finally {
    if (startTimer) clearTimeout(startTimer);
  }
  const exit = (async () => {
    try {
      for (;;) {
        const next = await iterator.next();
        if (next.done) break;
        const event = next.value.event?.event;
        if (event?.case === "data") {
          const output = event.value.output;
          // A terminal's output is one stream (`pty`); envd sends nothing else for it, but stdout/stderr would be the terminal's too.
          if (output.value && output.value.length > 0) request.onData(output.value);
        } else if (event?.case === "end") {
          return exitCodeOfEnd(event.value);
        }
      }
      throw new Error("the envd terminal stream ended without an end event");
    } finally {
      controller.abort();
    }
  })();
  return { pid, exit };
}
