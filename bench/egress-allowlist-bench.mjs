#!/usr/bin/env node
// The cost of the Docker egress allowlist (adr/0021, adr/0027), in one run: a 100 MB download from a server container
// on a Docker network this bench creates, through the allowlist proxy (NetworkMode none + forwarder + host proxy) over
// each transport (the Unix socket, and the exec stream it falls back to) against the same download with egress
// "allow" on that network; and the create time with and without an allowlist. Goal: allowlist throughput >= 0.5x. Run: node bench/egress-allowlist-bench.mjs (needs a local engine and the test
// image). Traffic only reaches the server container this bench starts; everything it creates is labelled and removed.
import { randomBytes } from "node:crypto";
import { createSandbox } from "@sbx/core";
import { createSandboxProvider } from "@sbx/docker";
import Docker from "dockerode";
import { sized } from "./lib/smoke.mjs";
import { median } from "./lib/stats.mjs";

const image = process.env.SBX_DOCKER_IMAGE ?? "sbx-test/python:3.11";
// Smoke mode (--smoke, lib/smoke.mjs): a 2 MB download, one round, one create of each kind.
const megabytes = sized(Number(process.env.SBX_EGRESS_BENCH_MB ?? 100), 2);
const createRuns = sized(Number(process.env.SBX_EGRESS_BENCH_CREATES ?? 5), 1);
const rounds = sized(Number(process.env.SBX_EGRESS_BENCH_ROUNDS ?? 3), 1);
const docker = new Docker();
const networkName = `sbx-egress-bench-${randomBytes(4).toString("hex")}`;

const SERVER = `
import http.server
chunk = b"x" * (1 << 20)
class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def do_GET(self):
        total = int(self.path.strip("/") or "1")
        self.send_response(200)
        self.send_header("Content-Length", str(total << 20))
        self.end_headers()
        for _ in range(total):
            self.wfile.write(chunk)
    def log_message(self, *args):
        pass
http.server.ThreadingHTTPServer(("0.0.0.0", 8080), Handler).serve_forever()
`;

const DOWNLOAD = `python3 -c 'import sys, time, urllib.request
start = time.monotonic(); total = 0
with urllib.request.urlopen(sys.argv[1], timeout=60) as response:
    while True:
        block = response.read(1 << 20)
        if not block: break
        total += len(block)
print(total, time.monotonic() - start)'`;

async function download(sandbox, url) {
  const result = await sandbox.commands.run(`${DOWNLOAD} ${url}`, { timeoutMs: 300_000 });
  if (result.exitCode !== 0) throw new Error(`download failed: ${result.stderr}`);
  const [bytes, seconds] = result.stdout.trim().split(" ").map(Number);
  if (bytes !== megabytes << 20) throw new Error(`downloaded ${bytes} bytes, expected ${megabytes << 20}`);
  return { seconds, megabytesPerSecond: megabytes / seconds };
}

const network = await docker.createNetwork({ Name: networkName, Driver: "bridge", Labels: { "sbx.test": "1" } });
let server;
const sandboxes = [];
try {
  server = await docker.createContainer({
    Image: image,
    Entrypoint: ["python3", "-c", SERVER],
    Cmd: [],
    Labels: { "sbx.test": "1" },
    HostConfig: { NetworkMode: networkName, AutoRemove: true },
  });
  await server.start();
  const address = (await server.inspect()).NetworkSettings.Networks[networkName].IPAddress;
  const url = `http://${address}:8080/${megabytes}`;
  const provider = createSandboxProvider({ image, bridgeNetwork: networkName, egressPorts: [8080] });

  // Wait until the server answers (from an allowed sandbox).
  const allowed = await createSandbox(provider, { network: { egress: "allow" } });
  sandboxes.push(allowed);
  for (let attempt = 0; attempt < 50; attempt++) {
    const probe = await allowed.commands.run(
      `python3 -c 'import urllib.request; urllib.request.urlopen("http://${address}:8080/1", timeout=1).read()'`,
    );
    if (probe.exitCode === 0) break;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  const allowlisted = await createSandbox(provider, { network: { egress: "deny", allow: [address] } });
  sandboxes.push(allowlisted);
  const execProvider = createSandboxProvider({ image, bridgeNetwork: networkName, egressPorts: [8080], egressTransport: "exec" });
  const execAllowlisted = await createSandbox(execProvider, { network: { egress: "deny", allow: [address] } });
  sandboxes.push(execAllowlisted);
  const transport = allowlisted.audit().policies.network.applied.proxy.transport;
  // Rounds of allow, allowlist (Unix socket), allowlist (exec stream), interleaved, so a burst of load on the shared
  // machine hits each mode alike; each round's ratio is taken against that round's allow download.
  const speeds = { allow: [], allowlist: [], exec: [] };
  for (let round = 0; round < rounds; round++) {
    speeds.allow.push((await download(allowed, url)).megabytesPerSecond);
    speeds.allowlist.push((await download(allowlisted, url)).megabytesPerSecond);
    speeds.exec.push((await download(execAllowlisted, url)).megabytesPerSecond);
  }

  const createTimes = { deny: [], allowlist: [], allowlistExec: [] };
  for (let run = 0; run < createRuns; run++) {
    for (const [kind, options, from] of [
      ["deny", { network: { egress: "deny" } }, provider],
      ["allowlist", { network: { egress: "deny", allow: [address] } }, provider],
      ["allowlistExec", { network: { egress: "deny", allow: [address] } }, execProvider],
    ]) {
      const start = performance.now();
      const sandbox = await createSandbox(from, options);
      createTimes[kind].push(performance.now() - start);
      await sandbox.kill();
    }
  }
  const rounded = (values) => values.map((value) => Math.round(value));
  const ratios = (values) => values.map((value, index) => Number((value / speeds.allow[index]).toFixed(2)));
  const report = {
    downloadMB: megabytes,
    rounds,
    allowMBps: rounded(speeds.allow),
    transport,
    allowlistMBps: rounded(speeds.allowlist),
    ratios: ratios(speeds.allowlist),
    medianRatio: Number((median(speeds.allowlist) / median(speeds.allow)).toFixed(2)),
    execStreamMBps: rounded(speeds.exec),
    execStreamRatios: ratios(speeds.exec),
    goal: ">= 0.5",
    createMedianMs: {
      deny: Math.round(median(createTimes.deny)),
      allowlist: Math.round(median(createTimes.allowlist)),
      allowlistExec: Math.round(median(createTimes.allowlistExec)),
    },
    createRuns,
  };
  console.log(JSON.stringify(report));
} finally {
  await Promise.all(sandboxes.map((sandbox) => sandbox.kill().catch(() => {})));
  await server?.remove({ force: true }).catch(() => {});
  await network.remove().catch(() => {});
}
