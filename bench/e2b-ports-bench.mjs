#!/usr/bin/env node
// Exposed ports on E2B (ADR 0060), through the E2B emulator: a 20 MB download from a python http.server inside through
// `sandbox.ports.expose` (every byte crosses the sbx agent, one envd process: its stdout stream down, its stdin up)
// against the same 20 MB read by an envd `cat` of the file (`commands.run`, envd's process stream, no agent), alternating
// download by download so machine drift hits both alike. Only loopback traffic: the emulator and the sandbox's port.
// Usage: node bench/e2b-ports-bench.mjs [downloads]   (default 5 of 20 MB; --smoke: 1 of 2 MB, see lib/smoke.mjs)
import { request } from "node:http";
import { createSandbox } from "@sbx/core";
import { createSandboxProvider } from "@sbx/e2b";
import { startE2BEmulator } from "@sbx/e2b-emulator";
import { benchArguments, sized } from "./lib/smoke.mjs";
import { median, time } from "./lib/stats.mjs";

const downloads = sized(Number(benchArguments[0] ?? 5), 1);
const fileBytes = sized(20 * 1000 * 1000, 2 * 1000 * 1000);

/** GETs /big.bin through `url` with the port token, counting the body; rejects unless all `fileBytes` arrived. */
function download(url, token) {
  return new Promise((resolve, reject) => {
    const { hostname, port } = new URL(url);
    const headers = { "x-sbx-port-token": token, connection: "close" };
    const call = request({ host: hostname, port: Number(port), path: "/big.bin", headers }, (response) => {
      let received = 0;
      response.on("data", (chunk) => (received += chunk.byteLength));
      response.on("end", () => (received === fileBytes ? resolve() : reject(new Error(`received ${received} of ${fileBytes} bytes`))));
      response.on("error", reject);
    });
    call.on("error", reject);
    call.end();
  });
}

const emulator = await startE2BEmulator({});
const sandbox = await createSandbox(createSandboxProvider(emulator.connectionOptions), { timeoutMs: 600_000 });
try {
  await sandbox.commands.run(`head -c ${fileBytes} /dev/urandom > big.bin`);
  const server = await sandbox.commands.start("exec python3 -m http.server 8000 --bind 127.0.0.1");
  const exposed = await sandbox.ports.expose(8000);
  for (let attempt = 0; ; attempt++) {
    const ok = await download(exposed.url, exposed.token).then(
      () => true,
      () => false,
    );
    if (ok) break;
    if (attempt > 300) throw new Error("the server inside did not answer within 30 s");
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  const throughPort = [];
  const throughCat = [];
  for (let round = 0; round < downloads; round++) {
    throughPort.push(await time(() => download(exposed.url, exposed.token)));
    throughCat.push(
      await time(async () => {
        const result = await sandbox.commands.run("cat big.bin", { outputLimitBytes: 32 * 1024 * 1024 });
        if (result.exitCode !== 0 || result.stdoutBytes.byteLength !== fileBytes)
          throw new Error(`cat gave ${result.stdoutBytes.byteLength} bytes, exit ${result.exitCode}`);
      }),
    );
  }
  const port = median(throughPort);
  const cat = median(throughCat);
  const rate = (ms) => ((fileBytes / 1e6 / ms) * 1000).toFixed(1);
  console.log(`${downloads} downloads of ${fileBytes / 1e6} MB each way, alternating (median):`);
  console.log(`  ports.expose (sbx agent over envd): ${port.toFixed(0)} ms (${rate(port)} MB/s)`);
  console.log(`  envd cat (commands.run):            ${cat.toFixed(0)} ms (${rate(cat)} MB/s)`);
  console.log(`  ratio port / cat: ${(port / cat).toFixed(2)}`);
  console.log(
    `  all port runs (ms): ${throughPort.map((value) => value.toFixed(0)).join(", ")}; all cat runs: ${throughCat.map((value) => value.toFixed(0)).join(", ")}`,
  );
  await exposed.close();
  await server.kill();
} finally {
  await sandbox.kill().catch(() => {});
  await emulator.stop();
}
