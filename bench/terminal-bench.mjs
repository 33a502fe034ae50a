#!/usr/bin/env node
// Terminal keystroke-to-echo latency (ADR 0049): one byte typed into a terminal running `cat` until the terminal's
// echo of it arrives, through sbx's terminal (the sbx agent's pseudo-terminal on Docker) against raw dockerode
// `docker exec -it` (Tty: true, hijacked stdin) running `cat` in a container made with the adapter's own config (a
// second container: an untagged process of the sandbox user in sbx's container is, rightly, taken for an escapee by the
// verified kill), alternating keystroke by keystroke so machine drift hits both alike. The echo is the kernel's line
// discipline in both cases.
// Usage: node --expose-gc bench/terminal-bench.mjs [keystrokes]   (default 200; --smoke: 3, see lib/smoke.mjs)
import { createSandbox } from "@sbx/core";
import { createSandboxProvider } from "@sbx/docker";
import Docker from "dockerode";
import { adapterContainerConfig } from "./lib/adapter-container-config.mjs";
import { alternate } from "./lib/alternate.mjs";
import { benchArguments, sized } from "./lib/smoke.mjs";
import { formatTable, median, p95 } from "./lib/stats.mjs";

const image = process.env.SBX_DOCKER_IMAGE ?? "sbx-test/python:3.11";
const keystrokes = sized(Number(benchArguments[0] ?? 200), 3);
const docker = new Docker();

/** Sends one byte through `write` and resolves when `byte` arrives in the output `echoes` tells about. */
function keystroke(write, echoes) {
  let character = 0x61;
  return async () => {
    character = character === 0x7a ? 0x61 : character + 1;
    const expected = String.fromCharCode(character);
    const echoed = echoes.next(expected);
    await write(expected);
    await echoed;
  };
}

/** Resolves waiters when the output they wait for arrives. */
class Echoes {
  waiting = [];
  receive(text) {
    for (const waiter of [...this.waiting]) {
      if (text.includes(waiter.expected)) {
        this.waiting.splice(this.waiting.indexOf(waiter), 1);
        waiter.resolve();
      }
    }
  }
  next(expected) {
    return new Promise((resolve) => this.waiting.push({ expected, resolve }));
  }
}

const provider = createSandboxProvider({ image });
const rawContainer = await docker.createContainer(await adapterContainerConfig(provider, { "sbx.bench": "terminal" }));
await rawContainer.start();
const sandbox = await createSandbox(provider, { metadata: { bench: "terminal" }, timeoutMs: 600_000 });
try {
  const sbxEchoes = new Echoes();
  const terminal = await sandbox.terminals.create({ command: "exec cat", onData: (data) => sbxEchoes.receive(Buffer.from(data).toString("latin1")) });
  const rawEchoes = new Echoes();
  const exec = await rawContainer.exec({ Cmd: ["cat"], Tty: true, AttachStdin: true, AttachStdout: true, AttachStderr: true, User: "10001:10001" });
  const stream = await exec.start({ hijack: true, stdin: true, Tty: true });
  stream.on("data", (chunk) => rawEchoes.receive(chunk.toString("latin1")));
  const samples = await alternate(
    keystrokes,
    keystroke((text) => terminal.write(text), sbxEchoes),
    keystroke(
      (text) =>
        new Promise((resolve, reject) => {
          stream.write(text, (error) => (error ? reject(error) : resolve()));
        }),
      rawEchoes,
    ),
  );
  stream.end();
  await terminal.kill();
  const ratio = median(samples.work) / median(samples.raw);
  console.log(`\nterminal keystroke-to-echo (${new Date().toISOString()}, node ${process.version}, ${keystrokes} keystrokes each)`);
  console.log(
    formatTable(
      ["path", "p50 ms", "p95 ms", "ratio p50 to docker exec -it"],
      [
        ["sbx terminal (agent pty)", median(samples.work).toFixed(2), p95(samples.work).toFixed(2), ratio.toFixed(3)],
        ["docker exec -it (dockerode, raw)", median(samples.raw).toFixed(2), p95(samples.raw).toFixed(2), "1.000"],
      ],
    ),
  );
} finally {
  await sandbox.kill();
  await rawContainer.remove({ force: true });
}
