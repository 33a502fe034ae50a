import { median, p95, time } from "./stats.mjs";

/**
 * Times `work` and its `baseline` alternately, `count` times each after one warm-up of each (which one goes first
 * alternates too, with a GC before each pair when node runs with --expose-gc), so machine drift hits both alike.
 * Returns both sample lists in milliseconds.
 */
export async function alternate(count, work, baseline) {
  await work();
  await baseline();
  const samples = { work: [], raw: [] };
  for (let index = 0; index < count; index++) {
    globalThis.gc?.();
    if (index % 2 === 0) {
      samples.work.push(await time(work));
      samples.raw.push(await time(baseline));
    } else {
      samples.raw.push(await time(baseline));
      samples.work.push(await time(work));
    }
  }
  return samples;
}

/** One row of an adapter-against-raw-SDK comparison: `adapterWork` and `rawWork` measured with {@link alternate}. */
export async function compareWithRaw(name, count, adapterWork, rawWork, note = "") {
  const samples = await alternate(count, adapterWork, rawWork);
  return {
    name,
    count,
    adapter: { median: median(samples.work), p95: p95(samples.work) },
    raw: { median: median(samples.raw), p95: p95(samples.raw) },
    note,
  };
}

/** Prints the rows of {@link compareWithRaw} under `title`: medians, p95 and the ratio of medians (adapter / raw). */
export function printComparison(title, rows) {
  const format = (value) => value.toFixed(1).padStart(8);
  console.log(`\n${title} (${new Date().toISOString()}, node ${process.version})`);
  console.log(
    `${"operation".padEnd(40)} ${"n".padStart(3)} ${"adapter med".padStart(11)} ${"p95".padStart(8)} ${"raw med".padStart(8)} ${"p95".padStart(8)} ${"ratio".padStart(6)}`,
  );
  for (const row of rows) {
    const ratio = row.adapter.median / row.raw.median;
    console.log(
      `${row.name.padEnd(40)} ${String(row.count).padStart(3)} ${format(row.adapter.median)}    ${format(row.adapter.p95)} ${format(row.raw.median)} ${format(row.raw.p95)} ${ratio.toFixed(2).padStart(5)}x${row.note ? `  (${row.note})` : ""}`,
    );
  }
  console.log("times in ms; ratio = adapter median / raw median; target <= 1.05x");
}
