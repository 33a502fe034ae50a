#!/usr/bin/env node
// The sbx sandbox agent on Docker against raw dockerode `docker exec true`, measured in the same run, with E2B's
// runCode through the emulator beside it. Each row alternates with the raw baseline, iteration by iteration.
// Targets (issue 9): stateful runCode (`x += 1; x`) p50 <= 0.15x raw exec; one-shot runCode p50 <= 0.3x raw exec;
// a warm command through the agent (`true`, output captured) p50 <= 0.15x raw exec.
// Usage: node --expose-gc bench/agent-bench.mjs [iterations]   (default 40; --smoke: 1, see lib/smoke.mjs)
import { createSandbox } from "@sbx/core";
import { createSandboxFromDriver, runPythonOneShot, withCodeAgent } from "@sbx/core/adapter";
import { createSandboxProvider } from "@sbx/docker";
import { adapterContainerConfig } from "./lib/adapter-container-config.mjs";
import { createSandboxProvider as createE2BProvider } from "@sbx/e2b";
import { startE2BEmulator } from "@sbx/e2b-emulator";
import Docker from "dockerode";
import { alternate } from "./lib/alternate.mjs";
import { benchArguments, sized } from "./lib/smoke.mjs";
import { rawDockerExec } from "./lib/raw-docker-exec.mjs";
import { formatTable, median, p95, time } from "./lib/stats.mjs";

const image = process.env.SBX_DOCKER_IMAGE ?? "sbx-test/python:3.11";
const iterations = sized(Number(benchArguments[0] ?? 40), 1);
const docker = new Docker();
const provider = createSandboxProvider({ image });
const defaults = {
  network: { egress: "deny" },
  timeoutMs: 600_000,
  env: {},
  secrets: {},
  metadata: { bench: "agent" },
  mounts: [],
  user: "default",
  allowFake: false,
  settings: {},
};

const rows = [];
function row(name, work, raw, target) {
  const ratio = raw ? median(work) / median(raw) : undefined;
  const pass = target === undefined || ratio === undefined ? "-" : ratio <= target ? "yes" : "NO";
  rows.push([
    name,
    median(work).toFixed(1),
    p95(work).toFixed(1),
    raw ? median(raw).toFixed(1) : "-",
    ratio === undefined ? "-" : ratio.toFixed(3),
    target === undefined ? "-" : `<= ${target}`,
    pass,
  ]);
}

const rawContainer = await docker.createContainer(await adapterContainerConfig(provider, { "sbx.bench": "agent" }));
await rawContainer.start();
const raw = () => rawDockerExec(rawContainer, ["true"]);
const sandbox = await createSandbox(provider, { metadata: { bench: "agent" } });
let emulator;
try {
  const context = await sandbox.createCodeContext();
  await sandbox.runCode("x = 0", { contextId: context.id });
  const stateful = await alternate(iterations, () => sandbox.runCode("x += 1; x", { contextId: context.id }), raw);
  row("stateful runCode `x += 1; x` (agent)", stateful.work, stateful.raw, 0.15);
  row("raw dockerode exec `true`", stateful.raw);
  const oneShot = await alternate(iterations, () => sandbox.runCode("1 + 1"), raw);
  row("one-shot runCode `1 + 1` (agent)", oneShot.work, oneShot.raw, 0.3);

  // Before: the same one-shot through a plain exec (core's runPythonOneShot, what Docker did without the agent).
  const driver = await provider.create({ target: image, options: defaults });
  try {
    const quiet = {
      code: "1 + 1",
      language: "python",
      env: {},
      cwd: driver.workspace,
      onStdout: () => {},
      onStderr: () => {},
      signal: new AbortController().signal,
    };
    const before = await alternate(Math.min(iterations, 20), () => runPythonOneShot(driver, quiet), raw);
    row("one-shot runCode via plain exec (before)", before.work, before.raw);
    // Commands: the plain exec path (settings.agentCommands "off"), then through the warm agent (Docker's default
    // once a code call has started it; adr/0025: tagged, killed by the root helper, OOM reported, as on exec).
    const plain = await createSandbox(createSandboxProvider({ image, agentCommands: "off" }), { metadata: { bench: "agent" } });
    try {
      const command = await alternate(Math.min(iterations, 20), () => plain.commands.run("true"), raw);
      row("commands.run(`true`) plain docker exec", command.work, command.raw);
    } finally {
      await plain.kill();
    }
    const warm = await alternate(iterations, () => sandbox.commands.run("true"), raw);
    row("commands.run(`true`) through the agent (Docker default, warm)", warm.work, warm.raw, 0.15);
    // For comparison: the agent path without the backend's enforcement (no tag, no root kill, no OOM probe; ADR 0016's opt-in).
    const untagged = createSandboxFromDriver(withCodeAgent(driver, { backend: "docker", commands: "agent" }), {
      provider,
      target: image,
      options: defaults,
    });
    await untagged.runCode("1");
    const bare = await alternate(iterations, () => untagged.commands.run("true"), raw);
    row("commands.run(`true`) through the agent, no enforcement (ADR 0016)", bare.work, bare.raw);
    const output = await alternate(iterations, () => sandbox.commands.run("echo out; echo err >&2"), raw);
    row("commands.run(`echo out; echo err >&2`) through the agent", output.work, output.raw);
    // The first command of a sandbox with settings.agentCommands "start" pays the agent's start once.
    const startFirst = [];
    for (let index = 0; index < sized(Math.max(3, Math.round(iterations / 8)), 1); index++) {
      const fresh = await createSandbox(createSandboxProvider({ image, agentCommands: "start" }), { metadata: { bench: "agent" } });
      try {
        startFirst.push(await time(() => fresh.commands.run("true")));
      } finally {
        await fresh.kill();
      }
    }
    row('first command with agentCommands "start" (agent start + run)', startFirst);
  } finally {
    await driver.destroy();
  }

  // The agent's start: paid by the first code call of a sandbox (lazy), never by create.
  const creates = [];
  const firstCalls = [];
  for (let index = 0; index < sized(Math.max(3, Math.round(iterations / 8)), 1); index++) {
    let fresh;
    creates.push(await time(async () => (fresh = await createSandbox(provider, { metadata: { bench: "agent" } }))));
    firstCalls.push(await time(() => fresh.runCode("1 + 1")));
    await fresh.kill();
  }
  row("create (agent not started: lazy)", creates);
  row("first runCode of a sandbox (agent start + run)", firstCalls);

  try {
    emulator = await startE2BEmulator({ image });
    const e2b = await createSandbox(createE2BProvider({ ...emulator.connectionOptions }));
    try {
      const e2bContext = await e2b.createCodeContext();
      await e2b.runCode("x = 0", { contextId: e2bContext.id });
      const e2bStateful = await alternate(Math.min(iterations, 20), () => e2b.runCode("x += 1; x", { contextId: e2bContext.id }), raw);
      row("E2B (emulator) stateful runCode `x += 1; x`", e2bStateful.work, e2bStateful.raw);
      const e2bOneShot = await alternate(Math.min(iterations, 20), () => e2b.runCode("1 + 1"), raw);
      row("E2B (emulator) runCode `1 + 1` (default context)", e2bOneShot.work, e2bOneShot.raw);
    } finally {
      await e2b.kill();
    }
  } catch (error) {
    console.error(`E2B emulator rows skipped: ${error instanceof Error ? error.message : String(error)}`);
  }
} finally {
  await sandbox.kill();
  await rawContainer.remove({ force: true, v: true }).catch(() => {});
  await emulator?.stop();
}

console.log(`\nsbx sandbox agent on Docker (${image}), ${iterations} iterations, ms; ratio = median / median of raw exec \`true\` in the same run\n`);
console.log(formatTable(["case", "p50", "p95", "raw exec p50", "ratio", "target", "met"], rows));
