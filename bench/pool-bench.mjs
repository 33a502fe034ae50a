#!/usr/bin/env node
// The warm pool on Docker (ADR 0050, issue 25): acquire → first command against a cold create → first command in the
// same run (p50, p99 and their ratio), the acquire rate the pool sustains while it refills, and host memory per pooled
// sandbox (this process's RSS, and the container's own memory as the engine counts it).
// Run: node bench/pool-bench.mjs [--smoke] (needs a local engine and the test image). Target (issue 25): acquire →
// first command p50 <= 5 ms and p99 <= 20 ms with the pool warm.
import { loadavg } from "node:os";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { createSandbox, createSandboxPool } from "@sbx/core";
import { createSandboxProvider } from "@sbx/docker";
import Docker from "dockerode";
import { sized } from "./lib/smoke.mjs";
import { formatTable, median, time } from "./lib/stats.mjs";

setFlagsFromString("--expose-gc");
const collectGarbage = runInNewContext("gc");
const image = process.env.SBX_DOCKER_IMAGE ?? "sbx-test/python:3.11";
// Smoke mode (--smoke): two rounds each, a pool of two, four acquires for the rate.
const warmRounds = sized(Number(process.env.SBX_BENCH_ROUNDS ?? 30), 2);
const coldRounds = sized(Math.max(5, Math.round(warmRounds / 3)), 2);
const poolSize = sized(4, 2);
const rateAcquires = sized(16, 4);
const docker = new Docker();
const provider = createSandboxProvider({ image });
const createOptions = { metadata: { bench: "pool" } };

/** Nearest-rank percentile. */
function percentile(values, fraction) {
  const sorted = [...values].sort((left, right) => left - right);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(fraction * sorted.length) - 1))];
}

/** Kills sandboxes in the background (not timed); the returned promise settles once all are gone. */
const killing = [];
const killLater = (sandbox) => killing.push(sandbox.kill().catch(() => {}));

// Cold: create → first command, the figure a pool is for.
const cold = [];
for (let round = 0; round < coldRounds; round++) {
  let sandbox;
  cold.push(
    await time(async () => {
      sandbox = await createSandbox(provider, createOptions);
      await sandbox.commands.run("true");
    }),
  );
  await sandbox.kill();
}

// Host memory per pooled sandbox: this process's RSS before the pool and with it full; the containers' own usage.
collectGarbage();
const rssBefore = process.memoryUsage().rss;
const pool = await createSandboxPool(provider, { size: poolSize, createOptions, refillConcurrency: 2 });
const warm = [];
const settled = [];
const acquireOnly = [];
const usedSandboxCommand = [];
let rssPerSandboxMiB;
let containerMiB;
try {
  await pool.warm({ signal: AbortSignal.timeout(300_000) });
  collectGarbage();
  rssPerSandboxMiB = (process.memoryUsage().rss - rssBefore) / 1048576 / poolSize;
  const pooled = await docker.listContainers({ filters: { label: ["sbx.metadata.bench=pool", `sbx.owner.pid=${process.pid}`] } });
  const usages = await Promise.all(
    pooled.map(async (info) => (await docker.getContainer(info.Id).stats({ stream: false })).memory_stats?.usage ?? 0),
  );
  containerMiB = median(usages) / 1048576;

  // Warm: acquire → first command with the pool full (the wait for the refill is not timed).
  for (let round = 0; round < warmRounds; round++) {
    await pool.warm({ signal: AbortSignal.timeout(300_000) });
    const started = performance.now();
    const sandbox = await pool.acquire();
    acquireOnly.push(performance.now() - started);
    await sandbox.commands.run("true");
    warm.push(performance.now() - started);
    // The same command once more in the same sandbox: what a command costs here at all, on this machine now.
    usedSandboxCommand.push(await time(() => sandbox.commands.run("true")));
    killLater(sandbox);
  }

  // Settled: the same, from a pool that is full and quiet (the earlier sandboxes' removal finished, and a pause of
  // 250 ms after the last refill), as a service's pool is between requests. Above, the acquire follows the refill's
  // end at once, while the engine still finishes that create and the previous kill (ADR 0057).
  for (let round = 0; round < warmRounds; round++) {
    await pool.warm({ signal: AbortSignal.timeout(300_000) });
    await Promise.allSettled(killing);
    await new Promise((resolve) => setTimeout(resolve, 250));
    const started = performance.now();
    const sandbox = await pool.acquire();
    await sandbox.commands.run("true");
    settled.push(performance.now() - started);
    killLater(sandbox);
  }

  // Rate while refilling: acquires one after another from a full pool, each handed out as soon as one is ready.
  await pool.warm({ signal: AbortSignal.timeout(300_000) });
  const rateStarted = performance.now();
  for (let index = 0; index < rateAcquires; index++) killLater(await pool.acquire());
  const rateSeconds = (performance.now() - rateStarted) / 1000;
  const rate = rateAcquires / rateSeconds;

  const warmP50 = percentile(warm, 0.5);
  const warmP99 = percentile(warm, 0.99);
  const coldP50 = percentile(cold, 0.5);
  const coldP99 = percentile(cold, 0.99);
  console.log(
    formatTable(
      ["measure", "pool (warm)", "cold create", "ratio (pool / cold)", "target"],
      [
        ["acquire → first command p50 (ms)", warmP50.toFixed(2), coldP50.toFixed(1), (warmP50 / coldP50).toFixed(4), "p50 <= 5 ms"],
        ["acquire → first command p99 (ms)", warmP99.toFixed(2), coldP99.toFixed(1), (warmP99 / coldP99).toFixed(4), "p99 <= 20 ms"],
        [
          "the same from a settled pool, p50 (ms)",
          percentile(settled, 0.5).toFixed(2),
          coldP50.toFixed(1),
          (percentile(settled, 0.5) / coldP50).toFixed(4),
          "p50 <= 5 ms",
        ],
        [
          "the same from a settled pool, p99 (ms)",
          percentile(settled, 0.99).toFixed(2),
          coldP99.toFixed(1),
          (percentile(settled, 0.99) / coldP99).toFixed(4),
          "p99 <= 20 ms",
        ],
      ],
    ),
  );
  console.log(
    formatTable(
      ["measure", "value"],
      [
        ["acquire alone p50 (ms)", percentile(acquireOnly, 0.5).toFixed(2)],
        ["a second command in the acquired sandbox p50 (ms, what any command costs here now)", percentile(usedSandboxCommand, 0.5).toFixed(2)],
        [`acquire rate while refilling (sandboxes/s, ${rateAcquires} acquires, pool of ${poolSize})`, rate.toFixed(2)],
        ["host RSS per pooled sandbox (MiB)", rssPerSandboxMiB.toFixed(2)],
        ["container memory per pooled sandbox (MiB, engine's count)", containerMiB.toFixed(1)],
      ],
    ),
  );
  console.log(
    `rounds: ${warmRounds} warm, ${warmRounds} settled, ${coldRounds} cold; load average ${loadavg()
      .map((load) => load.toFixed(1))
      .join(" ")}; pool stats: ${JSON.stringify({ ...pool.stats(), lastError: pool.stats().lastError?.message ?? null })}`,
  );
} finally {
  await pool.close();
  await Promise.allSettled(killing);
}
