#!/usr/bin/env node
// @sbx/modal overhead against calling the modal SDK (0.11.1) directly for the same work, both through the Modal
// gRPC emulator in one run (each emulated sandbox is a real container). Adapter and raw SDK calls alternate,
// iteration by iteration, so machine drift hits both alike. Reports medians, p95 and the ratio of medians.
// Usage: node --expose-gc bench/modal-bench.mjs [iterations]   (default 30; creates use a third of that; --smoke: 1)
import { createSandbox } from "@sbx/core";
import { createSandboxProvider } from "@sbx/modal";
import { startModalEmulator } from "@sbx/modal-emulator";
import { compareWithRaw, printComparison } from "./lib/alternate.mjs";
import { benchArguments, sized } from "./lib/smoke.mjs";

process.env.MODAL_CONFIG_PATH ??= "/nonexistent";
const { ModalClient } = await import("modal");

const iterations = sized(Number(benchArguments[0] ?? 30), 1);
const createIterations = sized(Math.max(3, Math.round(iterations / 3)), 1);
const payload = new Uint8Array(64 * 1024).map((_, index) => index % 251);

const emulator = await startModalEmulator({});
const provider = createSandboxProvider({
  tokenId: emulator.tokenId,
  tokenSecret: emulator.tokenSecret,
  serverUrl: emulator.serverUrl,
  logLevel: "error",
});
process.env.MODAL_SERVER_URL = emulator.serverUrl;
const client = new ModalClient({ tokenId: emulator.tokenId, tokenSecret: emulator.tokenSecret, logLevel: "error" });
delete process.env.MODAL_SERVER_URL;
const app = await client.apps.fromName("sbx-bench-raw", { createIfMissing: true });
const image = client.images.fromRegistry("python:3.12-slim");
// The raw SDK gets the same explicit deny policy, lifetime and working directory the adapter sends.
const rawCreate = () => client.sandboxes.create(app, image, { blockNetwork: true, timeoutMs: 600_000, workdir: "/workspace" });
async function rawRun(sandbox, command) {
  const process = await sandbox.exec(["/bin/sh", "-c", command], { mode: "binary" });
  const [stdout, stderr, exitCode] = await Promise.all([process.stdout.readBytes(), process.stderr.readBytes(), process.wait()]);
  return { stdout, stderr, exitCode };
}

const rows = [];
try {
  rows.push(
    await compareWithRaw(
      "create (+ kill, not timed)",
      createIterations,
      async () => {
        const sandbox = await createSandbox(provider);
        void sandbox.kill();
      },
      async () => {
        const sandbox = await rawCreate();
        void sandbox.terminate();
      },
    ),
  );

  const adapterSandbox = await createSandbox(provider);
  const rawSandbox = await rawCreate();
  try {
    rows.push(
      await compareWithRaw(
        "command (echo)",
        iterations,
        () => adapterSandbox.commands.run("echo hello"),
        () => rawRun(rawSandbox, "echo hello"),
        "adapter: wrapper shell (own session, pid file, stdin from /dev/null)",
      ),
    );
    rows.push(
      await compareWithRaw(
        "file round trip (64 KiB write + read)",
        iterations,
        async () => {
          await adapterSandbox.files.write("bench.bin", payload);
          await adapterSandbox.files.read("bench.bin", { format: "bytes" });
        },
        async () => {
          await rawSandbox.filesystem.writeBytes(payload, "/workspace/bench.bin");
          await rawSandbox.filesystem.readBytes("/workspace/bench.bin");
        },
        "adapter stats the path before the read (regular-file check: one more fs-tools exec)",
      ),
    );
    rows.push(
      await compareWithRaw(
        "runCode warm (agent) vs one-shot python3",
        iterations,
        () => adapterSandbox.runCode("print(1 + 1)"),
        () => rawRun(rawSandbox, "python3 -c 'print(1 + 1)'"),
        "adapter: the sbx agent over one exec kept open (ADR 0061); raw: one exec starting python3 per run",
      ),
    );
  } finally {
    await adapterSandbox.kill();
    await rawSandbox.terminate();
  }
} finally {
  await emulator.stop();
}

printComparison("@sbx/modal vs raw modal SDK (0.11.1) through the Modal emulator", rows);
