#!/usr/bin/env node
// Snapshots on @sbx/modal through the Modal gRPC emulator (ADR 0062): per round, the time of `sandbox.snapshot()`
// of a sandbox whose workspace holds a 10 MiB random file and 200 small files, and create → first command from that
// snapshot against a plain create → first command in the same round (alternating which goes first). Each copy's
// big file is checked against the source's md5. Reports every round (no medians: few rounds).
// Usage: node bench/modal-snapshot-bench.mjs [rounds]   (default 3; --smoke: 1)
import { createSandbox, deleteSnapshot } from "@sbx/core";
import { createSandboxProvider } from "@sbx/modal";
import { startModalEmulator } from "@sbx/modal-emulator";
import { benchArguments, sized } from "./lib/smoke.mjs";

process.env.MODAL_CONFIG_PATH ??= "/nonexistent";
const rounds = sized(Number(benchArguments[0] ?? 3), 1);

const emulator = await startModalEmulator({});
const provider = createSandboxProvider({
  tokenId: emulator.tokenId,
  tokenSecret: emulator.tokenSecret,
  serverUrl: emulator.serverUrl,
  logLevel: "error",
});

async function timed(work) {
  const started = performance.now();
  const value = await work();
  return { ms: performance.now() - started, value };
}

async function createThenFirstCommand(options) {
  return timed(async () => {
    const sandbox = await createSandbox(provider, options);
    await sandbox.commands.run("true");
    return sandbox;
  });
}

try {
  for (let round = 1; round <= rounds; round++) {
    const source = await createSandbox(provider);
    const snapshots = [];
    try {
      await source.commands.run("head -c 10485760 /dev/urandom > big.bin && mkdir small && for i in $(seq 1 200); do echo $i > small/$i.txt; done");
      const sum = (await source.commands.run("md5sum big.bin")).stdout.split(" ")[0];
      const snapshot = await timed(() => source.snapshot());
      snapshots.push(snapshot.value.id);
      const plainFirst = round % 2 === 1;
      const plain = plainFirst ? await createThenFirstCommand({}) : undefined;
      const copy = await createThenFirstCommand({ fromSnapshot: snapshot.value.id });
      const plainAfter = plainFirst ? plain : await createThenFirstCommand({});
      const copied = (await copy.value.commands.run("md5sum big.bin")).stdout.split(" ")[0];
      await Promise.all([copy.value.kill(), plainAfter.value.kill()]);
      if (copied !== sum) throw new Error(`round ${round}: the copy's big.bin differs from the source's (${copied} ≠ ${sum})`);
      console.log(
        `round ${round}: snapshot() ${snapshot.ms.toFixed(0)} ms; create from snapshot → first command ${copy.ms.toFixed(0)} ms; plain create → first command ${plainAfter.ms.toFixed(0)} ms; copy identical: ${copied === sum}`,
      );
    } finally {
      await source.kill();
      for (const id of snapshots) await deleteSnapshot(provider, id).catch(() => false);
    }
  }
} finally {
  await emulator.stop();
}
