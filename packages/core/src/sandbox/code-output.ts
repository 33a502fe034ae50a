import type { CodeRequest } from "../v1/provider.js";
import type { RunCodeOptions } from "../v1/sandbox.js";
import type { CallbackGuard } from "../limits/callback-guard.js";
import { OutputCollector } from "../limits/output-collector.js";
import { TextOutputCollector } from "../limits/text-output-collector.js";

/** One output stream of a run as `runCode` keeps it: the kept text, whether it was cut, every byte counted. */
export interface KeptOutput {
  /** The kept text, at most the limit (UTF-8 bytes). */
  text(): string;
  /** Whether the stream went past the limit. */
  readonly truncated: boolean;
  /** Bytes the stream produced, dropped ones included. */
  readonly totalBytes: number;
  /** Flushes a character split at the very end to the caller's listener. */
  finish(): void;
}

/** What one `runCode` keeps of its output, and the callbacks its backend delivers output to. */
export interface CodeOutput {
  /** Standard output as kept. */
  readonly stdout: KeptOutput;
  /** Standard error as kept. */
  readonly stderr: KeptOutput;
  /** The text callbacks of the `CodeRequest`. */
  readonly text: Pick<CodeRequest, "onStdout" | "onStderr">;
  /** The byte callbacks core's one-shot path delivers to instead, when it is the path. */
  readonly bytes?: { readonly onStdout: (chunk: Uint8Array) => void; readonly onStderr: (chunk: Uint8Array) => void };
}

/** The caller's listeners, wrapped by the guard (a throw stops the run and becomes its error). */
function listeners(guard: CallbackGuard, options: Pick<RunCodeOptions, "onStdout" | "onStderr">) {
  return {
    stdout: options.onStdout ? guard.wrap("onStdout", options.onStdout) : undefined,
    stderr: options.onStderr ? guard.wrap("onStderr", options.onStderr) : undefined,
  };
}

/** A backend's code channel delivers text: one text collector per stream keeps it, the caller's listeners see all of it. */
export function codeChannelOutput(limit: number, guard: CallbackGuard, options: Pick<RunCodeOptions, "onStdout" | "onStderr">): CodeOutput {
  const user = listeners(guard, options);
  const stdout = new TextOutputCollector(limit);
  const stderr = new TextOutputCollector(limit);
  return {
    stdout,
    stderr,
    text: {
      onStdout: guard.wrap("sbx", (text: string) => {
        stdout.push(text);
        user.stdout?.(text);
      }),
      onStderr: guard.wrap("sbx", (text: string) => {
        stderr.push(text);
        user.stderr?.(text);
      }),
    },
  };
}

/**
 * Core's one-shot Python over `spawn` delivers bytes: one byte collector per stream keeps and counts them exactly as
 * for commands (bytes past the cap are never even decoded unless a listener wants them).
 */
export function oneShotOutput(limit: number, guard: CallbackGuard, options: Pick<RunCodeOptions, "onStdout" | "onStderr">): CodeOutput {
  const user = listeners(guard, options);
  const stdout = new OutputCollector(limit);
  const stderr = new OutputCollector(limit);
  if (user.stdout) stdout.onText(user.stdout);
  if (user.stderr) stderr.onText(user.stderr);
  return {
    stdout,
    stderr,
    // Unused: the byte callbacks below take the output on this path.
    text: { onStdout: () => {}, onStderr: () => {} },
    bytes: {
      onStdout: guard.wrap("sbx", (chunk: Uint8Array) => stdout.push(chunk)),
      onStderr: guard.wrap("sbx", (chunk: Uint8Array) => stderr.push(chunk)),
    },
  };
}
