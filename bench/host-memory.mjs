// Host RSS growth while one Docker sandbox pushes data at the host (issue 7): runCode or commands.run printing N MiB,
// or files.read of an N MiB sparse file as bytes (whole) or as a stream. Prints one JSON line.
//   node bench/host-memory.mjs runCode 1024 | command 1024 | read-bytes 2048 | read-stream 2048
// Run it against an older build to get "before" figures (before ADR 0011: runCode 256 MiB grew RSS by ~207 MiB and
// 1024 MiB crashed the process with RangeError; a 256 MiB whole read grew it by ~461 MiB).
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { createSandbox } from "@sbx/core";
import { createSandboxProvider } from "@sbx/docker";
import { benchArguments, smoke } from "./lib/smoke.mjs";

setFlagsFromString("--expose-gc");
const collectGarbage = runInNewContext("gc");
const [which = "runCode", size = "256"] = benchArguments;
// Smoke mode (--smoke, lib/smoke.mjs): 4 MiB and a 4 MiB warm-up.
const mebibytes = smoke ? 4 : Number(size);
const warmUpMiB = smoke ? 4 : 64;
const sandbox = await createSandbox(createSandboxProvider({ image: process.env.SBX_DOCKER_IMAGE ?? "sbx-test/python:3.11" }), {
  metadata: { bench: "host-memory" },
});
try {
  // Warm-up: one-time costs (V8's young generation growing to its maximum) are not growth caused by the flood.
  await sandbox.runCode(`import sys\nblock = 'w' * 1048576\nfor _ in range(${warmUpMiB}):\n    sys.stdout.write(block)\n`);
  await sandbox.commands.run(`head -c ${warmUpMiB * 1048576} /dev/zero`);
  collectGarbage();
  const baseline = process.memoryUsage().rss;
  let peak = baseline;
  const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 20);
  const started = Date.now();
  let outcome;
  try {
    if (which === "runCode") {
      const execution = await sandbox.runCode(`import sys\nblock = 'x' * 1048576\nfor _ in range(${mebibytes}):\n    sys.stdout.write(block)\n`);
      outcome = { kept: execution.stdout.length, total: execution.totalBytes?.stdout ?? null };
    } else if (which === "command") {
      const result = await sandbox.commands.run(`head -c ${mebibytes * 1048576} /dev/zero`);
      outcome = { kept: result.stdoutBytes.byteLength, total: result.totalBytes.stdout };
    } else {
      await sandbox.commands.run(`truncate -s ${mebibytes}M big.bin`);
      if (which === "read-bytes") outcome = { read: (await sandbox.files.read("big.bin", { format: "bytes" })).byteLength };
      else {
        let streamed = 0;
        // eslint-disable-next-line @typescript-eslint/await-thenable -- Node's ReadableStream is async-iterable; the DOM lib types omit it
        for await (const chunk of await sandbox.files.read("big.bin", { format: "stream" })) streamed += chunk.byteLength;
        outcome = { streamed };
      }
    }
  } catch (error) {
    outcome = { threw: error?.code ?? error?.name, message: String(error?.message).slice(0, 160) };
  }
  clearInterval(sampler);
  peak = Math.max(peak, process.memoryUsage().rss);
  console.log(
    JSON.stringify({
      case: which,
      mebibytes,
      rssGrowthMiB: Number(((peak - baseline) / 1048576).toFixed(1)),
      seconds: (Date.now() - started) / 1000,
      outcome,
    }),
  );
} finally {
  await sandbox.kill();
}
