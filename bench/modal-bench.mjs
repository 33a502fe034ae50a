#!/usr/bin/env node
// @sbx/modal overhead against calling the modal SDK (0.11.1) directly for the same work, both through the Modal
// gRPC emulator in one run (each emulated sandbox is a real container). Adapter and raw SDK calls alternate,
// iteration by iteration, so machine drift hits both alike. Reports medians, p95 and the ratio of medians.
// Usage: node --expose-gc bench/modal-bench.mjs [iterations]   (default 30; creates use a third of that)
import { createSandbox } from "@sbx/core";
import { createSandboxProvider } from "@sbx/modal";
import { startModalEmulator } from "@sbx/modal-emulator";

process.env.MODAL_CONFIG_PATH ??= "/nonexistent";
const { ModalClient } = await import("modal");

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

const emulator = await startModalEmulator({});
const provider = createSandboxProvider({ tokenId: emulator.tokenId, tokenSecret: emulator.tokenSecret, serverUrl: emulator.serverUrl, logLevel: "error" });
process.env.MODAL_SERVER_URL = emulator.serverUrl;
const client = new ModalClient({ tokenId: emulator.tokenId, tokenSecret: emulator.tokenSecret, logLevel: "error" });
delete process.env.MODAL_SERVER_URL;
const app = await client.apps.fromName("sbx-bench-raw", { createIfMissing: true });
const image = client.images.fromRegistry("python:3.12-slim");
// The raw SDK gets the same explicit deny policy, lifetime and working directory the adapter sends.
const rawCreate = () => client.sandboxes.create(app, image, { blockNetwork: true, timeoutMs: 600_000, workdir: "/workspace" });
async function rawRun(sandbox, command) {
  const process = await sandbox.exec(["/bin/sh", "-c", command], { mode: "binary" });
  const [stdout, stderr, exitCode] = await Promise.all([process.stdout.readBytes(), process.stderr.readBytes(), process.wait()]);
  return { stdout, stderr, exitCode };
}

const rows = [];
try {
  rows.push(await compare("create (+ kill, not timed)", createIterations,
    async () => { const sandbox = await createSandbox(provider); void sandbox.kill(); },
    async () => { const sandbox = await rawCreate(); void sandbox.terminate(); }));

  const adapterSandbox = await createSandbox(provider);
  const rawSandbox = await rawCreate();
  try {
    rows.push(await compare("command (echo)", iterations,
      () => adapterSandbox.commands.run("echo hello"),
      () => rawRun(rawSandbox, "echo hello"),
      "adapter: wrapper shell (own session, pid file, stdin from /dev/null)"));
    rows.push(await compare("file round trip (64 KiB write + read)", iterations,
      async () => { await adapterSandbox.files.write("bench.bin", payload); await adapterSandbox.files.read("bench.bin", { format: "bytes" }); },
      async () => { await rawSandbox.filesystem.writeBytes(payload, "/workspace/bench.bin"); await rawSandbox.filesystem.readBytes("/workspace/bench.bin"); },
      "adapter stats the path before the read (regular-file check: one more fs-tools exec)"));
  } finally {
    await adapterSandbox.kill();
    await rawSandbox.terminate();
  }
} finally {
  await emulator.stop();
}

const format = (value) => value.toFixed(1).padStart(8);
console.log(`\n@sbx/modal vs raw modal SDK (0.11.1) through the Modal emulator (${new Date().toISOString()}, node ${process.version})`);
console.log(`${"operation".padEnd(40)} ${"n".padStart(3)} ${"adapter med".padStart(11)} ${"p95".padStart(8)} ${"raw med".padStart(8)} ${"p95".padStart(8)} ${"ratio".padStart(6)}`);
for (const row of rows) {
  const ratio = row.adapter.median / row.raw.median;
  console.log(`${row.name.padEnd(40)} ${String(row.count).padStart(3)} ${format(row.adapter.median)}    ${format(row.adapter.p95)} ${format(row.raw.median)} ${format(row.raw.p95)} ${ratio.toFixed(2).padStart(5)}x${row.note ? `  (${row.note})` : ""}`);
}
console.log("times in ms; ratio = adapter median / raw median; target <= 1.05x");
