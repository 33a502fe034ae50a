#!/usr/bin/env node
// @sbx/e2b overhead against calling the e2b SDK directly for the same work, both through the E2B emulator in
// one run (each emulated sandbox is a real container). Adapter and raw SDK calls alternate, iteration by
// iteration, so machine drift hits both alike. Reports medians, p95 and the ratio of medians (adapter / raw).
// Usage: node --expose-gc bench/e2b-bench.mjs [iterations]   (default 30; creates use a third of that; --smoke: 1)
import { Sandbox } from "@e2b/code-interpreter";
import { createSandbox } from "@sbx/core";
import { createSandboxProvider } from "@sbx/e2b";
import { startE2BEmulator } from "@sbx/e2b-emulator";
import { compareWithRaw, printComparison } from "./lib/alternate.mjs";
import { benchArguments, sized } from "./lib/smoke.mjs";

const iterations = sized(Number(benchArguments[0] ?? 30), 1);
const createIterations = sized(Math.max(3, Math.round(iterations / 3)), 1);
const payload = new Uint8Array(64 * 1024).map((_, index) => index % 251);

const emulator = await startE2BEmulator({});
const connection = emulator.connectionOptions;
const provider = createSandboxProvider({ ...connection });
// The raw SDK gets the same explicit deny policy the adapter sends (E2B allows egress by default).
const rawCreateOptions = { ...connection, allowInternetAccess: false, network: { allowOut: [], denyOut: ["0.0.0.0/0"] }, timeoutMs: 600_000 };
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
        const sandbox = await Sandbox.create("code-interpreter-v1", rawCreateOptions);
        void sandbox.kill();
      },
      "adapter also reads back getInfo for the audit record",
    ),
  );

  const adapterSandbox = await createSandbox(provider);
  const rawSandbox = await Sandbox.create("code-interpreter-v1", rawCreateOptions);
  try {
    rows.push(
      await compareWithRaw(
        "command (echo)",
        iterations,
        () => adapterSandbox.commands.run("echo hello"),
        () => rawSandbox.commands.run("echo hello"),
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
          await rawSandbox.files.write("/home/user/bench.bin", payload.slice().buffer);
          await rawSandbox.files.read("/home/user/bench.bin", { format: "bytes" });
        },
        "adapter stats the path alongside the read (regular-file check)",
      ),
    );
    rows.push(
      await compareWithRaw(
        "runCode one-shot (fresh state)",
        iterations,
        () => adapterSandbox.runCode("21 * 2"),
        async () => {
          const context = await rawSandbox.createCodeContext();
          await rawSandbox.runCode("21 * 2", { context });
          await rawSandbox.removeCodeContext(context);
        },
        "raw: createCodeContext + runCode + removeCodeContext; adapter removes the context without waiting",
      ),
    );
    const adapterContext = await adapterSandbox.createCodeContext();
    const rawContext = await rawSandbox.createCodeContext();
    rows.push(
      await compareWithRaw(
        "runCode in a context",
        iterations,
        () => adapterSandbox.runCode("21 * 2", { contextId: adapterContext.id }),
        () => rawSandbox.runCode("21 * 2", { context: rawContext }),
      ),
    );
  } finally {
    await adapterSandbox.kill();
    await rawSandbox.kill();
  }
} finally {
  await emulator.stop();
}

printComparison("@sbx/e2b vs raw e2b SDK through the E2B emulator", rows);
