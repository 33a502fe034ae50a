import type { ReadResult } from "deepagents";

/** What deepagents' shell read prints for an empty file, and its read tool recognises. */
export const EMPTY_FILE_REMINDER = "System reminder: File exists but has empty contents";

/**
 * Lines `offset + 1` to `offset + limit` of `text`, numbered as deepagents' shell read numbers them (`awk`'s
 * `%6d<TAB>line`), with the same pagination fields: so a backend read through the file API shows the model what a
 * read through the shell shows. Lines are split on `\n`; a final newline does not start another line.
 */
export function numberedWindow(text: string, offset: number, limit: number, mimeType: string): ReadResult {
  if (text === "") return { content: EMPTY_FILE_REMINDER, mimeType };
  const lines = text.split("\n");
  if (text.endsWith("\n")) lines.pop();
  const totalLines = lines.length;
  const start = Math.max(0, Math.floor(offset));
  const end = Math.min(start + Math.max(0, Math.floor(limit)), totalLines);
  const window = lines.slice(start, end);
  const content = window.map((line, index) => `${String(start + index + 1).padStart(6)}\t${line}\n`).join("");
  if (start >= totalLines || end <= start) return { content, mimeType };
  return { content, mimeType, totalLines, startLine: start + 1, endLine: end, nextOffset: end < totalLines ? end : undefined };
}
