#!/usr/bin/env node
// Exposed ports (ADR 0053): a 100 MB download from a python http.server inside an sbx Docker sandbox through
// `sandbox.ports.expose` (the sandbox has no network: every byte crosses the sbx agent), against the same download
// from the same server in a container of the same image whose port Docker publishes on 127.0.0.1 (a published port
// needs a network: that container is the bench's own, on a Docker network the bench creates and removes), alternating
// download by download so machine drift hits both alike. Then host memory (RSS) while a port is flooded: a client
// pushing into a server inside that never reads, and a server inside pushing to a client that never reads.
// Usage: node --expose-gc bench/ports-bench.mjs [downloads]   (default 5 of 100 MB; --smoke: 1 of 4 MB, see lib/smoke.mjs)
import { randomBytes } from "node:crypto";
import { request } from "node:http";
import { connect } from "node:net";
import { createSandbox } from "@sbx/core";
import { createSandboxProvider } from "@sbx/docker";
import Docker from "dockerode";
import { alternate } from "./lib/alternate.mjs";
import { benchArguments, sized } from "./lib/smoke.mjs";
import { formatTable, median, p95 } from "./lib/stats.mjs";

const image = process.env.SBX_DOCKER_IMAGE ?? "sbx-test/python:3.11";
const downloads = sized(Number(benchArguments[0] ?? 5), 1);
const fileBytes = sized(100 * 1000 * 1000, 4 * 1000 * 1000);
const floodMs = sized(5_000, 1_000);
const docker = new Docker();
const MiB = 1024 * 1024;

/** Makes `fileBytes` random bytes in `directory`/big.bin and serves `directory` on `bind`:8000 (the shell line both sides run). */
const serveCommand = (directory, bind) =>
  `cd ${directory} && head -c ${fileBytes} /dev/urandom > big.bin && exec python3 -m http.server 8000 --bind ${bind}`;

/** GETs /big.bin from `base` (with `headers`), counting and discarding the body; rejects unless all `fileBytes` arrived. */
function download(base, headers = {}) {
  return new Promise((resolve, reject) => {
    const { hostname, port } = new URL(base);
    const call = request({ host: hostname, port: Number(port), path: "/big.bin", headers: { ...headers, connection: "close" } }, (response) => {
      let received = 0;
      response.on("data", (chunk) => (received += chunk.byteLength));
      response.on("end", () => (received === fileBytes ? resolve() : reject(new Error(`received ${received} of ${fileBytes} bytes`))));
      response.on("error", reject);
    });
    call.on("error", reject);
    call.end();
  });
}

/** Resolves once `base` answers a GET of /big.bin with 200 (the server is up and the file written). */
async function waitForServer(base, headers = {}) {
  for (let attempt = 0; ; attempt++) {
    const status = await new Promise((resolve) => {
      const { hostname, port } = new URL(base);
      const call = request({ host: hostname, port: Number(port), method: "HEAD", path: "/big.bin", headers }, (response) => {
        response.resume();
        resolve(response.statusCode);
      });
      call.on("error", () => resolve(0));
      call.end();
    });
    if (status === 200) return;
    if (attempt > 1800) throw new Error(`${base} did not serve /big.bin within 180 s`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** Peak RSS growth (MiB) and peak host-held bytes while `flood` runs for `floodMs`, sampled every 50 ms. */
async function duringFlood(exposed, flood) {
  globalThis.gc?.();
  const before = process.memoryUsage().rss;
  let peakRss = before;
  let peakBuffered = 0;
  const stop = await flood();
  const until = Date.now() + floodMs;
  while (Date.now() < until) {
    await new Promise((resolve) => setTimeout(resolve, 50));
    peakRss = Math.max(peakRss, process.memoryUsage().rss);
    peakBuffered = Math.max(peakBuffered, exposed.stats().bufferedBytes);
  }
  const moved = stop();
  return { rssGrowth: (peakRss - before) / MiB, buffered: peakBuffered / 1024, moved: moved / MiB };
}

const network = await docker.createNetwork({ Name: `sbx-bench-ports-${randomBytes(4).toString("hex")}`, Labels: { "sbx.bench": "ports" } });
const raw = await docker.createContainer({
  Image: image,
  User: "10001:10001",
  Cmd: ["sh", "-c", serveCommand("/tmp", "0.0.0.0")],
  Labels: { "sbx.bench": "ports" },
  ExposedPorts: { "8000/tcp": {} },
  HostConfig: { NetworkMode: network.id, PortBindings: { "8000/tcp": [{ HostIp: "127.0.0.1", HostPort: "" }] } },
});
const sandbox = await createSandbox(createSandboxProvider({ image }), { metadata: { bench: "ports" }, timeoutMs: 900_000 });
try {
  await raw.start();
  const rawPort = (await raw.inspect()).NetworkSettings.Ports["8000/tcp"][0].HostPort;
  const rawBase = `http://127.0.0.1:${rawPort}`;
  // The workspace, not /tmp: the sandbox's /tmp is a small tmpfs.
  await sandbox.commands.start(serveCommand(sandbox.workspace, "127.0.0.1"));
  const exposed = await sandbox.ports.expose(8000);
  const auth = { "x-sbx-port-token": exposed.token };
  await Promise.all([waitForServer(rawBase), waitForServer(exposed.url, auth)]);

  globalThis.gc?.();
  const rssBefore = process.memoryUsage().rss;
  let rssPeak = rssBefore;
  const sampler = setInterval(() => (rssPeak = Math.max(rssPeak, process.memoryUsage().rss)), 50);
  const samples = await alternate(
    downloads,
    () => download(exposed.url, auth),
    () => download(rawBase),
  );
  clearInterval(sampler);
  const megabytes = fileBytes / 1e6;
  const throughput = (milliseconds) => (megabytes / (milliseconds / 1000)).toFixed(1);
  console.log(`\nexposed port download (${new Date().toISOString()}, node ${process.version}, ${downloads} downloads of ${megabytes} MB each)`);
  console.log(
    formatTable(
      ["path", "p50 ms", "p95 ms", "MB/s at p50", "ratio p50 to published port"],
      [
        [
          "sbx ports.expose (agent, no network)",
          median(samples.work).toFixed(1),
          p95(samples.work).toFixed(1),
          throughput(median(samples.work)),
          (median(samples.work) / median(samples.raw)).toFixed(3),
        ],
        [
          "docker published port (bench network)",
          median(samples.raw).toFixed(1),
          p95(samples.raw).toFixed(1),
          throughput(median(samples.raw)),
          "1.000",
        ],
      ],
    ),
  );

  // Upload flood: a server inside that accepts and never reads; the client writes as fast as the host lets it.
  await sandbox.files.write(
    "hold.py",
    "import socket, time\ns = socket.socket()\ns.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)\ns.bind(('127.0.0.1', 8001))\ns.listen(8)\nheld = []\nwhile True:\n    held.append(s.accept()[0])\n",
  );
  await sandbox.commands.start("exec python3 hold.py");
  await sandbox.commands.run(
    `for i in $(seq 100); do python3 -c "import socket; socket.create_connection(('127.0.0.1', 8001), 1)" && break; sleep 0.1; done`,
  );
  const holding = await sandbox.ports.expose(8001, { token: false });
  const upload = await duringFlood(holding, async () => {
    const { port } = new URL(holding.url);
    const socket = connect({ host: "127.0.0.1", port: Number(port) });
    socket.on("error", () => {});
    const block = Buffer.alloc(64 * 1024, 0x61);
    let accepted = 0;
    let stopped = false;
    const pump = () => {
      while (!stopped && socket.write(block)) accepted += block.byteLength;
      if (!stopped) socket.once("drain", () => ((accepted += block.byteLength), pump()));
    };
    socket.once("connect", pump);
    return () => {
      stopped = true;
      socket.destroy();
      return accepted;
    };
  });
  // Download flood: the http.server's 100 MB file to a client that never reads.
  const stalled = await duringFlood(exposed, async () => {
    const { port } = new URL(exposed.url);
    const socket = connect({ host: "127.0.0.1", port: Number(port) });
    socket.on("error", () => {});
    socket.write(`GET /big.bin HTTP/1.1\r\nhost: x\r\nx-sbx-port-token: ${exposed.token}\r\n\r\n`);
    socket.pause();
    return () => {
      socket.destroy();
      return 0;
    };
  });
  console.log(`\nhost memory while a port is flooded (${floodMs} ms each)`);
  console.log(
    formatTable(
      ["case", "host RSS growth (MiB)", "peak host-held bytes (KiB)", "client pushed (MiB)"],
      [
        [`${downloads + 1} downloads of ${megabytes} MB through the port`, ((rssPeak - rssBefore) / MiB).toFixed(1), "-", "-"],
        ["client flooding a server that never reads", upload.rssGrowth.toFixed(1), upload.buffered.toFixed(0), upload.moved.toFixed(1)],
        ["server flooding a client that never reads", stalled.rssGrowth.toFixed(1), stalled.buffered.toFixed(0), "-"],
      ],
    ),
  );
  await holding.close();
  await exposed.close();
} finally {
  await sandbox.kill();
  await raw.remove({ force: true });
  await network.remove();
}
