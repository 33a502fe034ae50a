import { withinTime } from "@sbx/core/adapter";

/** How long a finished command's output may stay quiet (no chunk arrived) before sbx asks whether a background child of the command still holds the pipe. */
export const OUTPUT_QUIET_WINDOW_MS = 1_000;

/**
 * How long a finished command's output may stay quiet while no process of the command is left (so nothing in the
 * sandbox holds the pipe) before the output counts as stalled and the call fails. Its end is then in flight but not
 * arriving: a broken stream, never a reason to close the output short.
 */
export const OUTPUT_STALL_LIMIT_MS = 60_000;

/** A command's two output streams being read (`pumpCommandOutput`): their combined end, and how many chunks arrived so far. */
export interface CommandOutput {
  /** Settles when both streams ended (resolves) or one failed (rejects with the stream's error). */
  readonly ended: Promise<void>;
  /** Chunks delivered so far, on either stream: progress, for the quiet window. */
  chunks(): number;
  /** Stops reading both streams (a background child holds them, or the command is over). */
  cancel(): void;
}

/** Reads one stream to its end, delivering every non-empty chunk; rejects with the stream's own error. */
async function pump(stream: ReadableStream<Uint8Array>, deliver: (chunk: Uint8Array) => void): Promise<void> {
  const reader = stream.getReader();
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      if (value && value.byteLength > 0) deliver(value);
    }
  } finally {
    reader.releaseLock();
  }
}

/** Starts reading a command's stdout and stderr into the request's callbacks. */
export function pumpCommandOutput(
  streams: { stdout: ReadableStream<Uint8Array>; stderr: ReadableStream<Uint8Array> },
  deliver: { onStdout: (chunk: Uint8Array) => void; onStderr: (chunk: Uint8Array) => void },
): CommandOutput {
  let chunks = 0;
  const counted = (callback: (chunk: Uint8Array) => void) => (chunk: Uint8Array) => {
    chunks++;
    callback(chunk);
  };
  const ended = Promise.all([pump(streams.stdout, counted(deliver.onStdout)), pump(streams.stderr, counted(deliver.onStderr))]).then(() => undefined);
  // Observed here so a failure never reaches the event loop; `drainCommandOutput` reports it.
  ended.catch(() => {});
  return {
    ended,
    chunks: () => chunks,
    cancel: () => {
      void streams.stdout.cancel().catch(() => {});
      void streams.stderr.cancel().catch(() => {});
    },
  };
}

/** How the output of a command that exited came to an end. */
export type OutputEnd =
  /** Both streams reached their end: every byte was delivered. */
  | { readonly kind: "complete" }
  /** A stream failed; `error` is its own error. */
  | { readonly kind: "failed"; readonly error: unknown }
  /** Quiet, with a background process of the command still running: it holds the pipe, so the output was cut there. */
  | { readonly kind: "held-by-background-child" }
  /** Quiet for `OUTPUT_STALL_LIMIT_MS` with no process of the command left: the end never arrived. */
  | { readonly kind: "stalled"; readonly quietMs: number }
  /** The caller stopped waiting (`signal`): after a kill, or once the sandbox is gone. */
  | { readonly kind: "abandoned" };

/**
 * Waits, after the command exited, for its output to reach its end (ADR 0028). A slow client (a slow link, a loaded
 * host) keeps receiving for as long as chunks keep arriving: nothing is cut by a timer. Only when the output has been
 * quiet for `quietWindowMs` is the sandbox asked whether a process of the command still runs (`commandStillRuns`):
 * when one does, a background child holds the pipe and the result must not wait for it (the driver contract), so
 * the output is cut there; when none does, the end is in flight and the wait goes on, up to `stallLimitMs` of
 * silence, after which the output counts as stalled (an error for the caller, never a short success). sbx's own
 * helper scripts (`cat` of a file read) leave no background process, so their output is never cut.
 */
export async function drainCommandOutput(
  output: CommandOutput,
  options: {
    readonly commandStillRuns: () => Promise<boolean>;
    readonly quietWindowMs?: number;
    readonly stallLimitMs?: number;
    /** Stops the wait: resolves with `abandoned` (no further check runs). */
    readonly signal?: AbortSignal;
  },
): Promise<OutputEnd> {
  const ended = output.ended.then(
    (): OutputEnd => ({ kind: "complete" }),
    (error: unknown): OutputEnd => ({ kind: "failed", error }),
  );
  let onAbort: (() => void) | undefined;
  const abandoned = new Promise<OutputEnd>((resolve) => {
    if (options.signal?.aborted) resolve({ kind: "abandoned" });
    onAbort = () => resolve({ kind: "abandoned" });
    options.signal?.addEventListener("abort", onAbort, { once: true });
  });
  // The signal outlives the command (the driver's, for the sandbox's life): the listener goes when the drain ends.
  try {
    return await waitForOutputEnd(output, { ...options, ended, abandoned });
  } finally {
    options.signal?.removeEventListener("abort", onAbort!);
  }
}

/** The loop of `drainCommandOutput`, given its end and its abandonment as promises. */
async function waitForOutputEnd(
  output: CommandOutput,
  options: {
    readonly commandStillRuns: () => Promise<boolean>;
    readonly quietWindowMs?: number;
    readonly stallLimitMs?: number;
    readonly ended: Promise<OutputEnd>;
    readonly abandoned: Promise<OutputEnd>;
  },
): Promise<OutputEnd> {
  const quietWindowMs = options.quietWindowMs ?? OUTPUT_QUIET_WINDOW_MS;
  const stallLimitMs = options.stallLimitMs ?? OUTPUT_STALL_LIMIT_MS;
  const { ended, abandoned } = options;
  const settled = Promise.race([ended, abandoned]);
  let quietSince = Date.now();
  let seenChunks = output.chunks();
  for (;;) {
    const end = await withinTime(settled, quietWindowMs, () => undefined);
    if (end) return end;
    if (output.chunks() !== seenChunks) {
      seenChunks = output.chunks();
      quietSince = Date.now();
      continue;
    }
    const stillRuns = await Promise.race([options.commandStillRuns(), abandoned]);
    if (typeof stillRuns === "object") return stillRuns;
    if (stillRuns) return { kind: "held-by-background-child" };
    // The check took time: output may have arrived or ended meanwhile.
    const after = await Promise.race([settled, Promise.resolve(undefined)]);
    if (after) return after;
    if (output.chunks() !== seenChunks) continue;
    const quietMs = Date.now() - quietSince;
    if (quietMs >= stallLimitMs) return { kind: "stalled", quietMs };
  }
}
