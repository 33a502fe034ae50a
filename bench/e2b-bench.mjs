#!/usr/bin/env node
// @sbx/e2b overhead against calling the e2b SDK directly for the same work, both through the E2B emulator in
// one run (each emulated sandbox is a real container). Adapter and raw SDK calls alternate, iteration by
// iteration, so machine drift hits both alike. Reports medians, p95 and the ratio of medians (adapter / raw).
// Usage: node --expose-gc bench/e2b-bench.mjs [iterations]   (default 30; creates use a third of that)
import { Sandbox } from "@e2b/code-interpreter";
import { createSandbox } from "@sbx/core";
import { createSandboxProvider } from "@sbx/e2b";
import { startE2BEmulator } from "@sbx/e2b-emulator";

const iterations = Number(process.argv[2] ?? 30);
const createIterations = Math.max(3, Math.round(iterations / 3));
const payload = new Uint8Array(64 * 1024).map((_, index) => index % 251);

function percentile(sorted, fraction) {
  return sorted[Math.min(sorted.length - 1, Math.ceil(fraction * sorted.length) - 1)];
}
function summary(samples) {
  const sorted = [...samples].sort((a, b) => a - b);
  return { median: percentile(sorted, 0.5), p95: percentile(sorted, 0.95) };
}
async function timed(work) {
  const started = performance.now();
  await work();
  return performance.now() - started;
}

/** Runs `adapterWork` and `rawWork` alternately (which goes first alternates too) after one warm-up each. */
async function compare(name, count, adapterWork, rawWork, note = "") {
  await adapterWork();
  await rawWork();
  const adapter = [];
  const raw = [];
  for (let index = 0; index < count; index++) {
    globalThis.gc?.();
    if (index % 2 === 0) {
      adapter.push(await timed(adapterWork));
      raw.push(await timed(rawWork));
    } else {
      raw.push(await timed(rawWork));
      adapter.push(await timed(adapterWork));
    }
  }
  return { name, count, adapter: summary(adapter), raw: summary(raw), note };
}

const emulator = await startE2BEmulator({});
const connection = emulator.connectionOptions;
const provider = createSandboxProvider({ ...connection });
// The raw SDK gets the same explicit deny policy the adapter sends (E2B allows egress by default).
const rawCreateOptions = { ...connection, allowInternetAccess: false, network: { allowOut: [], denyOut: ["0.0.0.0/0"] }, timeoutMs: 600_000 };
const rows = [];
try {
  rows.push(await compare("create (+ kill, not timed)", createIterations,
    async () => { const sandbox = await createSandbox(provider); void sandbox.kill(); },
    async () => { const sandbox = await Sandbox.create("code-interpreter-v1", rawCreateOptions); void sandbox.kill(); },
    "adapter also reads back getInfo for the audit record"));

  const adapterSandbox = await createSandbox(provider);
  const rawSandbox = await Sandbox.create("code-interpreter-v1", rawCreateOptions);
  try {
    rows.push(await compare("command (echo)", iterations,
      () => adapterSandbox.commands.run("echo hello"),
      () => rawSandbox.commands.run("echo hello")));
    rows.push(await compare("file round trip (64 KiB write + read)", iterations,
      async () => { await adapterSandbox.files.write("bench.bin", payload); await adapterSandbox.files.read("bench.bin", { format: "bytes" }); },
      async () => { await rawSandbox.files.write("/home/user/bench.bin", payload.slice().buffer); await rawSandbox.files.read("/home/user/bench.bin", { format: "bytes" }); },
      "adapter stats the path alongside the read (regular-file check)"));
    rows.push(await compare("runCode one-shot (fresh state)", iterations,
      () => adapterSandbox.runCode("21 * 2"),
      async () => { const context = await rawSandbox.createCodeContext(); await rawSandbox.runCode("21 * 2", { context }); await rawSandbox.removeCodeContext(context); },
      "raw: createCodeContext + runCode + removeCodeContext; adapter removes the context without waiting"));
    const adapterContext = await adapterSandbox.createCodeContext();
    const rawContext = await rawSandbox.createCodeContext();
    rows.push(await compare("runCode in a context", iterations,
      () => adapterSandbox.runCode("21 * 2", { contextId: adapterContext.id }),
      () => rawSandbox.runCode("21 * 2", { context: rawContext })));
  } finally {
    await adapterSandbox.kill();
    await rawSandbox.kill();
  }
} finally {
  await emulator.stop();
}

const format = (value) => value.toFixed(1).padStart(8);
console.log(`\n@sbx/e2b vs raw e2b SDK through the E2B emulator (${new Date().toISOString()}, node ${process.version})`);
console.log(`${"operation".padEnd(40)} ${"n".padStart(3)} ${"adapter med".padStart(11)} ${"p95".padStart(8)} ${"raw med".padStart(8)} ${"p95".padStart(8)} ${"ratio".padStart(6)}`);
for (const row of rows) {
  const ratio = row.adapter.median / row.raw.median;
  console.log(`${row.name.padEnd(40)} ${String(row.count).padStart(3)} ${format(row.adapter.median)}    ${format(row.adapter.p95)} ${format(row.raw.median)} ${format(row.raw.p95)} ${ratio.toFixed(2).padStart(5)}x${row.note ? `  (${row.note})` : ""}`);
}
console.log("times in ms; ratio = adapter median / raw median; target <= 1.05x");
