#!/usr/bin/env node
// Runs every benchmark in this folder, one after another (they share the machine; run them alone).
// Each reports medians, p95 and ratios against a baseline measured in the same run: machines are noisy.
// Usage: npm run bench  (or: node --expose-gc bench/run.mjs [docker|e2b|modal|fake|agent|pool|ports|kubernetes|apple-container] [--smoke])
import { spawnSync } from "node:child_process";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { benchArguments, smoke } from "./lib/smoke.mjs";

const here = dirname(fileURLToPath(import.meta.url));
const [only] = benchArguments;
const benches = [
  { name: "docker", file: "docker-bench.mjs" },
  { name: "e2b", file: "e2b-bench.mjs" },
  { name: "fake", file: "fake-bench.mjs" },
  { name: "agent", file: "agent-bench.mjs" },
  { name: "modal", file: "modal-bench.mjs" },
  { name: "pool", file: "pool-bench.mjs" },
  { name: "ports", file: "ports-bench.mjs" },
  { name: "kubernetes", file: "kubernetes-bench.mjs" },
  { name: "apple-container", file: "apple-container-bench.mjs" },
].filter((bench) => !only || bench.name === only);

let failed = 0;
for (const bench of benches) {
  console.log(`\n=== ${bench.name} (${bench.file}) ===`);
  const result = spawnSync(process.execPath, ["--expose-gc", join(here, bench.file), ...(smoke ? ["--smoke"] : [])], { stdio: "inherit", cwd: here });
  if (result.status !== 0) failed++;
}
process.exit(failed === 0 ? 0 : 1);
