import { createHash } from "node:crypto";
import { createSandbox, isSbxError } from "@sbx/core";
import { shareEmulator } from "@sbx/emulator-kit/testing";
import { startModalEmulator } from "@sbx/modal-emulator";
import { Sandbox as ModalSandbox, type ContainerProcess } from "modal";
import { afterEach, describe, expect, it } from "vitest";
import { createSandboxProvider } from "../src/index.js";

/**
 * A command's output ends at its end, or the call fails (ADR 0028): a client that reads the SDK's stdout slowly (a
 * slow link, a loaded host) still gets every byte of a large file read, and a stdout stream that fails after the
 * command exited fails the call instead of closing it short. The SDK's stream is wrapped inside the test (through
 * the emulator), which is how a slow link looks to the adapter. Skips loudly without Docker.
 */
const shared = shareEmulator({ start: () => startModalEmulator({}), backend: "modal", label: "@sbx/modal output-drain tests" });

const MEBIBYTE = 1024 * 1024;

function provider() {
  return createSandboxProvider({
    tokenId: shared.emulator!.tokenId,
    tokenSecret: shared.emulator!.tokenSecret,
    serverUrl: shared.emulator!.serverUrl,
    logLevel: "error",
  });
}

type StdoutWrapper = (stdout: ReadableStream<Uint8Array>, process: ContainerProcess<Uint8Array>) => ReadableStream<Uint8Array>;

// eslint-disable-next-line @typescript-eslint/unbound-method -- kept to be called with the sandbox as `this` (originalExec.call) when the wrapper is undone
const originalExec = ModalSandbox.prototype.exec;

/** Replaces the stdout of every command the SDK starts from now on (the adapter's own helpers included). */
function wrapEveryStdout(wrap: StdoutWrapper): void {
  ModalSandbox.prototype.exec = async function (this: ModalSandbox, ...args: Parameters<typeof originalExec>) {
    const process = (await originalExec.apply(this, args)) as ContainerProcess<Uint8Array>;
    const writable = process as { stdout: ReadableStream<Uint8Array> };
    writable.stdout = wrap(process.stdout, process);
    return process;
  } as typeof originalExec;
}

/** The SDK's stdout, each chunk delivered `delayMs` later than the SDK gave it. */
function slowed(delayMs: number): StdoutWrapper {
  return (stdout) => {
    const reader = stdout.getReader();
    return new ReadableStream<Uint8Array>(
      {
        async pull(controller) {
          const { value, done } = await reader.read();
          if (done) return controller.close();
          await new Promise((resolve) => setTimeout(resolve, delayMs));
          controller.enqueue(value);
        },
        cancel: (reason) => reader.cancel(reason),
      },
      { highWaterMark: 0 },
    );
  };
}

/** The SDK's stdout until `afterBytes` went by, then (once the command has exited) an error instead of the rest. */
function failingAfterExit(afterBytes: number): StdoutWrapper {
  return (stdout, process) => {
    const reader = stdout.getReader();
    let delivered = 0;
    return new ReadableStream<Uint8Array>(
      {
        async pull(controller) {
          if (delivered >= afterBytes) {
            await process.wait();
            await reader.cancel().catch(() => {});
            return controller.error(new Error("the stdout stream broke after the command exited"));
          }
          const { value, done } = await reader.read();
          if (done) return controller.close();
          delivered += value.byteLength;
          controller.enqueue(value);
        },
        cancel: (reason) => reader.cancel(reason),
      },
      { highWaterMark: 0 },
    );
  };
}

async function hashStream(stream: ReadableStream<Uint8Array>): Promise<{ digest: string; size: number }> {
  const hash = createHash("sha256");
  let size = 0;
  const reader = stream.getReader();
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    hash.update(value);
    size += value.byteLength;
  }
  return { digest: hash.digest("hex"), size };
}

describe("Modal command output ends at its end, or the call fails", () => {
  afterEach(() => {
    ModalSandbox.prototype.exec = originalExec;
  });

  it("a 16 MiB stream read with the SDK's stdout slowed by 2 ms per chunk is complete (sha256)", async (context) => {
    if (!shared.emulator) return context.skip(`Modal emulator unavailable: ${shared.unavailable}`);
    await using sandbox = await createSandbox(provider());
    const totalBytes = 16 * MEBIBYTE;
    await sandbox.commands.run(`head -c ${totalBytes} /dev/urandom > large.bin`);
    const expected = (await sandbox.commands.run("sha256sum large.bin | cut -d' ' -f1")).stdout.trim();
    wrapEveryStdout(slowed(2));
    const readBack = await hashStream(await sandbox.files.read("large.bin", { format: "stream" }));
    expect(readBack.size).toBe(totalBytes);
    expect(readBack.digest).toBe(expected);
  });

  it("a command's output slowed the same way is complete", async (context) => {
    if (!shared.emulator) return context.skip(`Modal emulator unavailable: ${shared.unavailable}`);
    await using sandbox = await createSandbox(provider());
    wrapEveryStdout(slowed(2));
    const result = await sandbox.commands.run(`head -c ${8 * MEBIBYTE} /dev/zero`, { outputLimitBytes: 16 * MEBIBYTE });
    expect(result.exitCode).toBe(0);
    expect(result.totalBytes.stdout).toBe(8 * MEBIBYTE);
    expect(result.truncated.stdout).toBe(false);
  });

  it("a stdout stream that fails after the command exited fails the command and the read, never a short success", async (context) => {
    if (!shared.emulator) return context.skip(`Modal emulator unavailable: ${shared.unavailable}`);
    await using sandbox = await createSandbox(provider());
    await sandbox.commands.run(`head -c ${4 * MEBIBYTE} /dev/zero > zeros.bin`);
    wrapEveryStdout(failingAfterExit(MEBIBYTE));
    const commandError = await sandbox.commands.run("cat zeros.bin").then(
      (result) => result,
      (caught: unknown) => caught,
    );
    expect(isSbxError(commandError, "SBX_PROVIDER")).toBe(true);
    expect((commandError as Error).message).toContain("output");
    const readError = await sandbox.files.read("zeros.bin", { format: "bytes" }).then(
      (bytes) => bytes.byteLength,
      (caught: unknown) => caught,
    );
    expect(isSbxError(readError, "SBX_PROVIDER")).toBe(true);
  });
});
