#!/usr/bin/env node
// Benchmarks the fake's first runCode: how long the first `runCode` of a fresh process takes, with Pyodide loaded on
// first use (the baseline, `preloadPython: false`, the fake's behaviour before 0.2) and loaded in the background when
// the sandbox is created (the default). Each sample is a fresh Node process, so nothing is loaded beforehand; both
// variants are measured in the same run, interleaved, and reported as medians, p95 and the ratio to the baseline.
// Also: the first and second createCodeContext (each context has its own interpreter; spares load in the background).
// Run: node bench/fake-bench.mjs   (SBX_BENCH_ROUNDS, default 5; SBX_BENCH_THINK_MS, default 1000; --smoke: 1 round, no think variants)
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { sized, smoke } from "./lib/smoke.mjs";
import { formatTable, median, p95 } from "./lib/stats.mjs";

const rounds = sized(Number(process.env.SBX_BENCH_ROUNDS ?? 5), 1);
const thinkMs = sized(Number(process.env.SBX_BENCH_THINK_MS ?? 1000), 100);

/** One sample, in a child process: prints JSON timings. */
async function sample(preload, think) {
  const { createSandbox } = await import("@sbx/core");
  const { createSandboxProvider } = await import("@sbx/fake");
  const sandbox = await createSandbox(createSandboxProvider({ preloadPython: preload }));
  if (think) {
    // What an agent does before its first runCode: a command, then some thinking.
    await sandbox.commands.run("ls -la; echo ready");
    await new Promise((resolve) => setTimeout(resolve, thinkMs));
  }
  let started = performance.now();
  const execution = await sandbox.runCode("print(1 + 1)");
  const firstRunCode = performance.now() - started;
  if (execution.stdout !== "2\n") throw new Error(`unexpected output ${JSON.stringify(execution.stdout)}`);
  started = performance.now();
  const first = await sandbox.createCodeContext();
  const firstContext = performance.now() - started;
  await sandbox.runCode("x = 1", { contextId: first.id });
  await new Promise((resolve) => setTimeout(resolve, think ? thinkMs : 0));
  started = performance.now();
  await sandbox.createCodeContext();
  const secondContext = performance.now() - started;
  await sandbox.kill();
  console.log(JSON.stringify({ firstRunCode, firstContext, secondContext }));
  process.exit(0);
}

if (process.argv[2] === "--sample") {
  await sample(process.argv[3] === "preload", process.argv[4] === "think");
} else {
  const variants = [
    { name: "lazy (baseline), runCode right after create", preload: false, think: false },
    { name: "preload, runCode right after create", preload: true, think: false },
    { name: `lazy (baseline), after a command + ${thinkMs} ms`, preload: false, think: true },
    { name: `preload, after a command + ${thinkMs} ms`, preload: true, think: true },
    // Smoke mode: the two variants without thinking (each sample is a fresh process loading Pyodide: CPU-heavy).
  ].filter((variant) => !smoke || !variant.think);
  const samples = new Map(variants.map((variant) => [variant.name, []]));
  for (let round = 0; round < rounds; round++) {
    for (const variant of variants) {
      const child = spawnSync(
        process.execPath,
        [fileURLToPath(import.meta.url), "--sample", variant.preload ? "preload" : "lazy", variant.think ? "think" : "now"],
        { encoding: "utf8" },
      );
      if (child.status !== 0) {
        console.error(child.stderr);
        process.exit(1);
      }
      samples.get(variant.name).push(JSON.parse(child.stdout.trim().split("\n").pop()));
    }
  }
  const rows = [];
  for (const variant of variants) {
    const baseline = samples.get(variants[variant.think ? 2 : 0].name).map((entry) => entry.firstRunCode);
    const values = samples.get(variant.name);
    const firstRunCode = values.map((entry) => entry.firstRunCode);
    rows.push([
      variant.name,
      median(firstRunCode).toFixed(0),
      p95(firstRunCode).toFixed(0),
      (median(firstRunCode) / median(baseline)).toFixed(3),
      median(values.map((entry) => entry.firstContext)).toFixed(0),
      median(values.map((entry) => entry.secondContext)).toFixed(0),
    ]);
  }
  console.log(`first runCode of a fresh process, ${rounds} rounds (ms)`);
  console.log(formatTable(["variant", "first runCode median", "p95", "ratio to baseline", "1st context median", "2nd context median"], rows));
}
