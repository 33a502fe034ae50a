#!/usr/bin/env node
// @sbx/kubernetes through the kube emulator (tools/kube-emulator: every Pod a real container), against @sbx/docker on
// the same engine in the same run (ADR 0048, ADR 0051). Reports:
// - API requests per sandbox lifecycle (create → 10 commands → kill) and per warm command, counted by the emulator,
//   for commands through the sbx agent over one exec stream (the default) and one exec per command (`agentCommands:
//   "off"`, the path before ADR 0051);
// - create → first command and a warm command as medians, each as a ratio to Docker;
// - N sandboxes at once (default 64; smoke: 2) through an emulator in its own process: errors, the host's RSS before,
//   at peak and after (this process: sbx and client-node), the emulator process's RSS reported separately, the load.
// Usage: node bench/kubernetes-bench.mjs [iterations] [sandboxes at once]   (default 5 and 64; --smoke: 1 and 2)
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { loadavg } from "node:os";
import { createRequire } from "node:module";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { createSandbox } from "@sbx/core";
import { createSandboxProvider as createDockerProvider } from "@sbx/docker";
import { startKubeEmulator } from "@sbx/kube-emulator";
import { createSandboxProvider as createKubernetesProvider } from "@sbx/kubernetes";
import { benchArguments, sized } from "./lib/smoke.mjs";
import { formatTable, median } from "./lib/stats.mjs";

setFlagsFromString("--expose-gc");
const collectGarbage = runInNewContext("gc");
const image = process.env.SBX_DOCKER_IMAGE ?? "sbx-test/python:3.11";
const iterations = sized(Number(benchArguments[0] ?? 5), 1);
const atOnce = sized(Number(benchArguments[1] ?? 64), 2);
/** The smallest limits a sandbox runs the agent and a command in (64 at once on a 2-core machine). */
const smallLimits = { cpus: 0.1, memoryMiB: 64 };
const mebibyte = 1024 * 1024;

/** Runs commands until one runs under the sbx agent (python3 its parent): the first command started it in the background. */
async function untilThroughAgent(sandbox) {
  for (let attempt = 0; attempt < 300; attempt += 1) {
    const result = await sandbox.commands.run("cat /proc/$PPID/comm 2>/dev/null || echo none");
    if (result.stdout.trim() === "python3") return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error("commands never went through the sbx agent");
}

/**
 * Create → 10 commands → kill, timing the first command and counting the API requests of all of it; then, on the
 * same sandbox before the kill, one warm command timed and counted once commands take their steady path (through
 * the agent for `throughAgent`: the first command starts it in the background).
 */
async function lifecycle(provider, emulator, throughAgent) {
  const count = () => emulator?.requestCount ?? 0;
  let mark = count();
  const started = performance.now();
  const sandbox = await createSandbox(provider);
  await sandbox.commands.run("true");
  const firstCommandMs = performance.now() - started;
  for (let index = 0; index < 9; index += 1) await sandbox.commands.run(`echo ${index}`);
  let lifecycleRequests = count() - mark;
  if (throughAgent) await untilThroughAgent(sandbox);
  mark = count();
  const warmStarted = performance.now();
  await sandbox.commands.run("true");
  const warmCommandMs = performance.now() - warmStarted;
  const warmRequests = count() - mark;
  mark = count();
  await sandbox.kill();
  lifecycleRequests += count() - mark;
  return { firstCommandMs, warmCommandMs, warmRequests, lifecycleRequests };
}

/** RSS of process `pid` in bytes (Linux /proc), or NaN. */
function rssOf(pid) {
  try {
    const line = readFileSync(`/proc/${pid}/status`, "utf8")
      .split("\n")
      .find((candidate) => candidate.startsWith("VmRSS:"));
    return Number(/(\d+)/.exec(line ?? "")?.[1]) * 1024;
  } catch {
    return Number.NaN;
  }
}

/** Starts the emulator's CLI in its own process; resolves with its kubeconfig and the process. */
async function startEmulatorProcess() {
  const cli = createRequire(import.meta.url)
    .resolve("@sbx/kube-emulator")
    .replace(/index\.js$/, "cli.js");
  const child = spawn(process.execPath, [cli], { env: { ...process.env, SBX_KUBE_EMULATOR_IMAGE: image }, stdio: ["ignore", "pipe", "inherit"] });
  let output = "";
  child.stdout.setEncoding("utf8");
  const kubeconfig = await new Promise((resolve, reject) => {
    child.once("exit", (code) => reject(new Error(`the kube emulator exited ${code}`)));
    child.stdout.on("data", (text) => {
      output += text;
      const end = output.indexOf("\n");
      if (end >= 0) resolve(output.slice(0, end));
    });
  });
  return { child, kubeconfig };
}

async function stopEmulatorProcess(child) {
  if (child.exitCode !== null) return;
  const exited = new Promise((resolve) => child.once("exit", resolve));
  child.kill("SIGTERM");
  await exited;
}

/** N sandboxes created at once, each runs a command, then all killed: errors and memory. */
async function manyAtOnce(count) {
  const { child, kubeconfig } = await startEmulatorProcess();
  try {
    const provider = createKubernetesProvider({ kubeconfig, defaultImage: image, createTimeoutMs: 600_000 });
    // Warm-up: one sandbox, so one-time costs (modules, the first agent upload) are not growth.
    const warm = await createSandbox(provider, { limits: smallLimits });
    await warm.commands.run("true");
    await warm.kill();
    collectGarbage();
    const before = process.memoryUsage().rss;
    const heapBefore = process.memoryUsage().heapUsed;
    let heapPeak = heapBefore;
    const emulatorBefore = rssOf(child.pid);
    let peak = before;
    let emulatorPeak = emulatorBefore;
    const sampler = setInterval(() => {
      const usage = process.memoryUsage();
      peak = Math.max(peak, usage.rss);
      heapPeak = Math.max(heapPeak, usage.heapUsed);
      emulatorPeak = Math.max(emulatorPeak, rssOf(child.pid));
    }, 50);
    const loadBefore = loadavg()[0];
    const started = performance.now();
    const errors = [];
    const sandboxes = await Promise.all(
      Array.from({ length: count }, async (_, index) => {
        try {
          const sandbox = await createSandbox(provider, { limits: smallLimits });
          const result = await sandbox.commands.run(`echo ${index}`);
          if (result.stdout !== `${index}\n`) throw new Error(`sandbox ${index} printed ${JSON.stringify(result.stdout)}`);
          return sandbox;
        } catch (error) {
          errors.push(error instanceof Error ? error.message : String(error));
          return undefined;
        }
      }),
    );
    const allRunningMs = performance.now() - started;
    const loadAtPeak = loadavg()[0];
    const kills = sandboxes
      .filter((sandbox) => sandbox !== undefined)
      .map((sandbox) => sandbox.kill().catch((error) => errors.push(`kill: ${String(error)}`)));
    await Promise.all(kills);
    clearInterval(sampler);
    collectGarbage();
    await new Promise((resolve) => setTimeout(resolve, 500));
    const after = process.memoryUsage().rss;
    return {
      heapBefore,
      heapPeak,
      count,
      errors,
      allRunningMs,
      before,
      peak,
      after,
      emulatorBefore,
      emulatorPeak,
      emulatorAfter: rssOf(child.pid),
      loadBefore,
      loadAtPeak,
    };
  } finally {
    await stopEmulatorProcess(child);
  }
}

const emulator = await startKubeEmulator({ image });
const viaAgent = createKubernetesProvider({ kubeconfig: emulator.kubeconfig, defaultImage: image });
const viaAgentInBackground = createKubernetesProvider({ kubeconfig: emulator.kubeconfig, defaultImage: image, agentCommands: "background" });
const execEach = createKubernetesProvider({ kubeconfig: emulator.kubeconfig, defaultImage: image, agentCommands: "off" });
const docker = createDockerProvider({ image, pull: false });
const results = { agent: [], background: [], exec: [], docker: [] };
try {
  for (let iteration = 0; iteration < iterations; iteration += 1) {
    results.agent.push(await lifecycle(viaAgent, emulator, true));
    results.background.push(await lifecycle(viaAgentInBackground, emulator, true));
    results.exec.push(await lifecycle(execEach, emulator, false));
    results.docker.push(await lifecycle(docker, undefined, false));
  }
} finally {
  await emulator.stop();
}
const of = (rows, field) => median(rows.map((row) => row[field]));
const ratio = (rows, field) => (of(rows, field) / of(results.docker, field)).toFixed(2);
const row = (name, rows, counted) => [
  name,
  of(rows, "firstCommandMs").toFixed(0),
  ratio(rows, "firstCommandMs"),
  of(rows, "warmCommandMs").toFixed(1),
  ratio(rows, "warmCommandMs"),
  counted ? String(of(rows, "lifecycleRequests")) : "-",
  counted ? String(of(rows, "warmRequests")) : "-",
];
console.log(
  formatTable(
    [
      "path (medians)",
      "create → first command (ms)",
      "ratio to docker",
      "warm command (ms)",
      "ratio to docker",
      "API requests per lifecycle (create → 10 commands → kill)",
      "API requests per warm command",
    ],
    [
      row("k8s, agent: start (default)", results.agent, true),
      row("k8s, agent: background", results.background, true),
      row("k8s, exec per command (off)", results.exec, true),
      row("docker", results.docker, false),
    ],
  ),
);

const many = await manyAtOnce(atOnce);
const inMiB = (bytes) => (bytes / mebibyte).toFixed(1);
console.log(
  `${many.count} sandboxes at once: ${many.errors.length} errors, all running a command after ${(many.allRunningMs / 1000).toFixed(1)} s; ` +
    `host RSS (this process) before ${inMiB(many.before)} MiB, peak ${inMiB(many.peak)} MiB, after ${inMiB(many.after)} MiB, growth at peak ${inMiB(many.peak - many.before)} MiB (V8 heap used ${inMiB(many.heapBefore)} → peak ${inMiB(many.heapPeak)} MiB); ` +
    `emulator process RSS before ${inMiB(many.emulatorBefore)} MiB, peak ${inMiB(many.emulatorPeak)} MiB, after ${inMiB(many.emulatorAfter)} MiB; ` +
    `load average ${many.loadBefore.toFixed(1)} before, ${many.loadAtPeak.toFixed(1)} at peak`,
);
for (const error of many.errors.slice(0, 5)) console.log(`  error: ${error}`);
process.exit(many.errors.length === 0 ? 0 : 1);
