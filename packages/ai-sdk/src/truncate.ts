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
  const bytes = Buffer.from(text, "utf8");
  const total = Math.max(bytes.length, totalBytes ?? 0);
  if (total <= limitBytes) return { text, truncated: false };
  let end = Math.min(limitBytes, bytes.length);
  while (end > 0 && (bytes[end]! & 0xc0) === 0x80) end -= 1;
  return { text: `${bytes.subarray(0, end).toString("utf8")}\n[output truncated: showing the first ${end} of ${total} bytes]`, truncated: true };
}
