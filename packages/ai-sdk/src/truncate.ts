import { truncateUtf8 } from "@sbx/core";

/** Text cut to a byte budget for the model, and whether it was cut. */
export interface TruncatedText {
  /** The kept text, ending with a note when something was cut. */
  readonly text: string;
  /** True when bytes were dropped (here, or already by the sandbox's own output cap). */
  readonly truncated: boolean;
}

/**
 * Keeps the first `limitBytes` bytes of `text` (whole characters) and states the truncation, so the model never
 * mistakes a cut output for the whole. `totalBytes` is the size the producer reported, when it is larger.
 */
export function truncateForModel(text: string, limitBytes: number, totalBytes?: number): TruncatedText {
  const total = Math.max(Buffer.byteLength(text, "utf8"), totalBytes ?? 0);
  if (total <= limitBytes) return { text, truncated: false };
  const kept = truncateUtf8(text, { maxBytes: limitBytes });
  return { text: `${kept.text}\n[output truncated: showing the first ${kept.byteLength} of ${total} bytes]`, truncated: true };
}
