#!/usr/bin/env node
// @sbx/apple-container through the stand-in `container` CLI (tools/container-standin: Apple's CLI over the Docker
// Engine), against @sbx/docker on the same engine in the same run, as bench/kubernetes-bench.mjs does for Kubernetes.
// Two apple-container rows: commands through the sbx agent (the default since adr/0052, `agentCommands: "start"`) and
// one `container exec` per command (`agentCommands: "off"`, the path before adr/0052). Reports create → first command
// and a warm command as medians, each as a ratio to Docker. The stand-in adds a node process and a docker CLI call to
// every `container exec`, so its absolute figures say nothing about a Mac; the ratio between the two apple rows is the
// point. Usage: node bench/apple-container-bench.mjs [iterations]   (default 10; --smoke: 1)
import { randomBytes } from "node:crypto";
import { createSandboxProvider as createAppleProvider } from "@sbx/apple-container";
import { CONTAINER_STANDIN_BINARY, removeStandinNamespace } from "@sbx/container-standin";
import { createSandbox } from "@sbx/core";
import { createSandboxProvider as createDockerProvider } from "@sbx/docker";
import { benchArguments, sized } from "./lib/smoke.mjs";
import { formatTable, median } from "./lib/stats.mjs";

const image = process.env.SBX_DOCKER_IMAGE ?? "sbx-test/python:3.11";
const iterations = sized(Number(benchArguments[0] ?? 10), 1);
// The stand-in's containers live in a namespace of this run's own, removed at the end.
const namespace = `bench-${randomBytes(4).toString("hex")}`;
const appleProvider = (agentCommands) =>
  createAppleProvider({
    image,
    binary: CONTAINER_STANDIN_BINARY,
    checkPlatform: false,
    environment: { CONTAINER_STANDIN_NAMESPACE: namespace },
    agentCommands,
  });
const providers = {
  agent: appleProvider("start"),
  exec: appleProvider("off"),
  docker: createDockerProvider({ image, pull: false }),
};

async function lifecycle(provider) {
  const started = performance.now();
  const sandbox = await createSandbox(provider);
  try {
    await sandbox.commands.run("true");
    const firstCommandMs = performance.now() - started;
    const warmStarted = performance.now();
    await sandbox.commands.run("true");
    const warmCommandMs = performance.now() - warmStarted;
    for (let index = 0; index < 3; index += 1) await sandbox.commands.run(`echo ${index}`);
    return { firstCommandMs, warmCommandMs };
  } finally {
    await sandbox.kill();
  }
}

const results = Object.fromEntries(Object.keys(providers).map((name) => [name, { first: [], warm: [] }]));
try {
  for (let iteration = 0; iteration < iterations; iteration += 1) {
    // Alternating, so load changes on the shared machine fall on every row alike.
    for (const [name, provider] of Object.entries(providers)) {
      const { firstCommandMs, warmCommandMs } = await lifecycle(provider);
      results[name].first.push(firstCommandMs);
      results[name].warm.push(warmCommandMs);
    }
  }
  const ratio = (name, kind) => (median(results[name][kind]) / median(results.docker[kind])).toFixed(2);
  const row = (label, name, kind, digits) => [
    label,
    median(results[name][kind]).toFixed(digits),
    median(results.docker[kind]).toFixed(digits),
    ratio(name, kind),
  ];
  console.log(
    formatTable(
      ["measure", "apple-container (stand-in)", "docker", "ratio apple/docker"],
      [
        row("create → first command, agent (median ms)", "agent", "first", 0),
        row("create → first command, exec per command (median ms)", "exec", "first", 0),
        row("warm command, agent (median ms)", "agent", "warm", 1),
        row("warm command, exec per command (median ms)", "exec", "warm", 1),
      ],
    ),
  );
} finally {
  await removeStandinNamespace(namespace);
}
