#!/usr/bin/env node
// Benchmarks @sbx/docker against raw dockerode doing the same work, side by side in one run, and prints medians,
// p95 and ratios (adapter / raw). Run: node bench/docker-bench.mjs (needs a local engine and the test image).
// Targets: create and exec within 1.10x of raw; file throughput >= 0.9x raw (time ratio <= 1.11); host memory growth
// while downloading 1 GiB < 64 MiB.
import { createReadStream, createWriteStream } from "node:fs";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pipeline } from "node:stream/promises";
import { randomUUID } from "node:crypto";
import { createSandbox } from "@sbx/core";
import { createSandboxProvider } from "@sbx/docker";
import { adapterContainerConfig } from "./lib/adapter-container-config.mjs";
import Docker from "dockerode";
import { rawDockerExec } from "./lib/raw-docker-exec.mjs";
import { sized } from "./lib/smoke.mjs";
import { formatTable, median, p95, time } from "./lib/stats.mjs";
import tar from "tar-stream";

const image = process.env.SBX_DOCKER_IMAGE ?? "sbx-test/python:3.11";
const rounds = sized(Number(process.env.SBX_BENCH_ROUNDS ?? 15), 1);
// Smoke mode (--smoke): one round, 1 MiB files, 2 sandboxes at once, a 16 MiB memory download.
const fileMiB = sized(64, 1);
const atOnce = sized(16, 2);
const bigDownloadMiB = sized(1024, 16);
const docker = new Docker();
const provider = createSandboxProvider({ image });

/** Raw dockerode: the same hardened container the adapter creates (read back from one through the escape hatch), no sbx layer. */
const rawTemplate = await adapterContainerConfig(provider, { "sbx.bench": "raw" });
function rawConfig() {
  return { ...rawTemplate, Labels: { ...rawTemplate.Labels, "sbx.bench.run": randomUUID() } };
}

async function rawCreate() {
  const container = await docker.createContainer(rawConfig());
  await container.start();
  return container;
}

/** Raw dockerode exec of a shell command line as the sandbox user. */
const rawExec = (container, command) => rawDockerExec(container, ["sh", "-c", command]);

async function rawUpload(container, hostPath, size, directory, name) {
  const pack = tar.pack();
  const entry = pack.entry({ name, size, mode: 0o644, uid: 10001, gid: 10001 });
  const feeding = pipeline(createReadStream(hostPath), entry);
  pack.finalize();
  await container.putArchive(pack, { path: directory });
  await feeding;
}

async function rawDownload(container, path, hostPath) {
  const response = await container.getArchive({ path });
  const extract = tar.extract();
  response.pipe(extract);
  for await (const entry of extract) await pipeline(entry, createWriteStream(hostPath));
}

const remove = (id) =>
  docker
    .getContainer(id)
    .remove({ force: true, v: true })
    .catch(() => {});

const results = [];
function record(name, adapterTimes, rawTimes, target, pass) {
  const ratio = median(adapterTimes) / median(rawTimes);
  results.push([
    name,
    median(adapterTimes).toFixed(1),
    p95(adapterTimes).toFixed(1),
    median(rawTimes).toFixed(1),
    p95(rawTimes).toFixed(1),
    ratio.toFixed(3),
    target,
    pass(ratio) ? "yes" : "NO",
  ]);
}

async function main() {
  const status = await provider.detect();
  if (!status.usable) {
    console.error(`Docker is not usable: ${status.reason}`);
    process.exit(1);
  }
  console.log(`sbx docker bench: ${status.reason}; image ${image}; ${rounds} rounds; node ${process.version}`);
  const scratch = await mkdtemp(join(tmpdir(), "sbx-bench-"));

  // Warm up both paths (engine info cache, image layers in page cache).
  for (let index = 0; index < sized(2, 1); index++) {
    const sandbox = await createSandbox(provider);
    await sandbox.commands.run("true");
    await sandbox.kill();
    const container = await rawCreate();
    await rawExec(container, "true");
    await remove(container.id);
  }

  // 1. Cold create to first command (alternating, so drift hits both).
  {
    const adapterTimes = [];
    const rawTimes = [];
    for (let index = 0; index < rounds; index++) {
      let sandbox;
      adapterTimes.push(
        await time(async () => {
          sandbox = await createSandbox(provider);
          await sandbox.commands.run("true");
        }),
      );
      await sandbox.kill();
      let container;
      rawTimes.push(
        await time(async () => {
          container = await rawCreate();
          await rawExec(container, "true");
        }),
      );
      await remove(container.id);
    }
    record("cold create to first command (ms)", adapterTimes, rawTimes, "<= 1.10", (ratio) => ratio <= 1.1);
  }

  // 2. Warm exec.
  const sandbox = await createSandbox(provider, { limits: { memoryMiB: 2048 }, settings: { workspaceSizeMiB: 1200 } });
  const container = await rawCreate();
  {
    const adapterTimes = [];
    const rawTimes = [];
    for (let index = 0; index < rounds * 3; index++) {
      const adapterOnce = async () => adapterTimes.push(await time(() => sandbox.commands.run("true")));
      const rawOnce = async () => rawTimes.push(await time(() => rawExec(container, "true")));
      for (const step of index % 2 === 0 ? [adapterOnce, rawOnce] : [rawOnce, adapterOnce]) await step();
    }
    record("warm exec `true` (ms)", adapterTimes, rawTimes, "<= 1.10", (ratio) => ratio <= 1.1);
  }

  // 3. 64 MiB upload and download.
  {
    const size = fileMiB * 1024 * 1024;
    const source = join(scratch, "source.bin");
    const chunk = Buffer.alloc(1024 * 1024);
    for (let index = 0; index < chunk.length; index += 4) chunk.writeUInt32LE((index * 2654435761) >>> 0, index);
    await writeFile(source, Buffer.concat(Array.from({ length: fileMiB }, () => chunk)));
    const uploadAdapter = [];
    const uploadRaw = [];
    const downloadAdapter = [];
    const downloadRaw = [];
    for (let index = 0; index < sized(Math.max(5, Math.round(rounds / 2)), 1); index++) {
      // Alternate which side goes first, so page-cache and writeback effects fall on both equally.
      const adapterUpload = async () => uploadAdapter.push(await time(() => sandbox.files.upload(source, "up.bin")));
      const rawUploadOnce = async () => uploadRaw.push(await time(() => rawUpload(container, source, size, "/workspace", "up.bin")));
      const adapterDownload = async () => downloadAdapter.push(await time(() => sandbox.files.download("up.bin", join(scratch, "down.bin"))));
      const rawDownloadOnce = async () => downloadRaw.push(await time(() => rawDownload(container, "/workspace/up.bin", join(scratch, "down.bin"))));
      for (const step of index % 2 === 0
        ? [adapterUpload, rawUploadOnce, adapterDownload, rawDownloadOnce]
        : [rawUploadOnce, adapterUpload, rawDownloadOnce, adapterDownload])
        await step();
    }
    record(`${fileMiB} MiB upload (ms)`, uploadAdapter, uploadRaw, "<= 1.11 (>= 0.9x throughput)", (ratio) => ratio <= 1 / 0.9);
    record(`${fileMiB} MiB download (ms)`, downloadAdapter, downloadRaw, "<= 1.11 (>= 0.9x throughput)", (ratio) => ratio <= 1 / 0.9);
  }

  // 4. 16 sandboxes created at once (each to its first command).
  {
    const adapterTimes = [];
    const rawTimes = [];
    for (let index = 0; index < sized(3, 1); index++) {
      let sandboxes = [];
      adapterTimes.push(
        await time(async () => {
          sandboxes = await Promise.all(
            Array.from({ length: atOnce }, async () => {
              const created = await createSandbox(provider);
              await created.commands.run("true");
              return created;
            }),
          );
        }),
      );
      await Promise.all(sandboxes.map((created) => created.kill()));
      let containers = [];
      rawTimes.push(
        await time(async () => {
          containers = await Promise.all(
            Array.from({ length: atOnce }, async () => {
              const created = await rawCreate();
              await rawExec(created, "true");
              return created;
            }),
          );
        }),
      );
      await Promise.all(containers.map((created) => remove(created.id)));
    }
    record(`${atOnce} sandboxes at once (ms, total)`, adapterTimes, rawTimes, "<= 1.10", (ratio) => ratio <= 1.1);
  }

  console.log("");
  console.log(formatTable(["operation", "adapter median", "adapter p95", "raw median", "raw p95", "ratio adapter/raw", "target", "met"], results));

  // 5. Host memory growth while downloading 1 GiB.
  {
    await sandbox.commands.run(`head -c ${bigDownloadMiB * 1024 * 1024} /dev/zero > big.bin`);
    globalThis.gc?.();
    const before = process.memoryUsage().rss;
    let peak = before;
    const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 20);
    const elapsed = await time(() => sandbox.files.download("big.bin", "/dev/null"));
    clearInterval(sampler);
    peak = Math.max(peak, process.memoryUsage().rss);
    const growthMiB = (peak - before) / 1024 / 1024;
    console.log("");
    console.log(
      formatTable(
        ["measure", "value", "target", "met"],
        [
          [`host RSS growth downloading ${bigDownloadMiB} MiB (MiB)`, growthMiB.toFixed(1), "< 64", growthMiB < 64 ? "yes" : "NO"],
          [`${bigDownloadMiB} MiB download time (ms)`, elapsed.toFixed(0), "-", "-"],
        ],
      ),
    );
  }

  await sandbox.kill();
  await remove(container.id);
  await rm(scratch, { recursive: true, force: true });
}

await main();
