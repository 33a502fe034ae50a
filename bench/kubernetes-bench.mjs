#!/usr/bin/env node
// @sbx/kubernetes through the kube emulator (tools/kube-emulator: every Pod a real container), against @sbx/docker on
// the same engine in the same run. Reports API requests per sandbox lifecycle (create → 10 commands → kill) and per
// command, counted by the emulator; create → first command and a warm command as medians, each as a ratio to Docker.
// Usage: node bench/kubernetes-bench.mjs [iterations]   (default 10; --smoke: 1)
import { createSandbox } from "@sbx/core";
import { createSandboxProvider as createDockerProvider } from "@sbx/docker";
import { startKubeEmulator } from "@sbx/kube-emulator";
import { createSandboxProvider as createKubernetesProvider } from "@sbx/kubernetes";
import { benchArguments, sized } from "./lib/smoke.mjs";
import { formatTable, median } from "./lib/stats.mjs";

const image = process.env.SBX_DOCKER_IMAGE ?? "sbx-test/python:3.11";
const iterations = sized(Number(benchArguments[0] ?? 10), 1);
const emulator = await startKubeEmulator({ image });
const kubernetes = createKubernetesProvider({ kubeconfig: emulator.kubeconfig, defaultImage: image });
const docker = createDockerProvider({ image, pull: false });

async function lifecycle(provider) {
  const started = performance.now();
  const sandbox = await createSandbox(provider);
  await sandbox.commands.run("true");
  const firstCommandMs = performance.now() - started;
  const warmStarted = performance.now();
  await sandbox.commands.run("true");
  const warmCommandMs = performance.now() - warmStarted;
  for (let index = 0; index < 8; index += 1) await sandbox.commands.run(`echo ${index}`);
  await sandbox.kill();
  return { firstCommandMs, warmCommandMs };
}

const results = { k8s: { first: [], warm: [] }, docker: { first: [], warm: [] } };
const requestsPerLifecycle = [];
try {
  for (let iteration = 0; iteration < iterations; iteration += 1) {
    const before = emulator.requestCount;
    const kube = await lifecycle(kubernetes);
    requestsPerLifecycle.push(emulator.requestCount - before);
    results.k8s.first.push(kube.firstCommandMs);
    results.k8s.warm.push(kube.warmCommandMs);
    const local = await lifecycle(docker);
    results.docker.first.push(local.firstCommandMs);
    results.docker.warm.push(local.warmCommandMs);
  }
  const sandbox = await createSandbox(kubernetes, {});
  const before = emulator.requestCount;
  await sandbox.commands.run("true");
  const requestsPerCommand = emulator.requestCount - before;
  await sandbox.kill();
  const ratio = (kind) => (median(results.k8s[kind]) / median(results.docker[kind])).toFixed(2);
  console.log(
    formatTable(
      ["measure", "k8s (emulator)", "docker", "ratio k8s/docker"],
      [
        ["create → first command, median ms", median(results.k8s.first).toFixed(0), median(results.docker.first).toFixed(0), ratio("first")],
        ["warm command, median ms", median(results.k8s.warm).toFixed(1), median(results.docker.warm).toFixed(1), ratio("warm")],
      ],
    ),
  );
  console.log(`API requests per lifecycle (create → 10 commands → kill): median ${median(requestsPerLifecycle)}`);
  console.log(`API requests per command: ${requestsPerCommand}`);
} finally {
  await emulator.stop();
}
