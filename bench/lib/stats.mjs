/** Median of numbers. */
export function median(values) {
  const sorted = [...values].sort((left, right) => left - right);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}

/** 95th percentile (nearest rank). */
export function p95(values) {
  const sorted = [...values].sort((left, right) => left - right);
  return sorted[Math.min(sorted.length - 1, Math.ceil(0.95 * sorted.length) - 1)];
}

/** Wall time of one async call in milliseconds. */
export async function time(call) {
  const started = performance.now();
  await call();
  return performance.now() - started;
}

/** Formats a table of rows (arrays of strings) with a header. */
export function formatTable(header, rows) {
  const widths = header.map((cell, column) => Math.max(cell.length, ...rows.map((row) => String(row[column]).length)));
  const line = (cells) => "| " + cells.map((cell, column) => String(cell).padEnd(widths[column])).join(" | ") + " |";
  return [line(header), "|" + widths.map((width) => "-".repeat(width + 2)).join("|") + "|", ...rows.map(line)].join("\n");
}
