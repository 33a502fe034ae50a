import { createHash, randomBytes } from "node:crypto";
import { startE2BEmulator } from "@sbx/e2b-emulator";
import { describe, expect, it } from "vitest";
import { shareEmulator, testDriverAudit } from "@sbx/emulator-kit/testing";
import { E2BDriver } from "../src/e2b-driver.js";
import { MAX_STDIN_CALL_BYTES, orderedStdinWriter } from "../src/ordered-stdin-writer.js";

/**
 * Stdin of one envd process (ADR 0060): the sbx agent writes its length-prefixed frames without waiting for each
 * other, and each write is one `SendInput` call, so the driver must send them one at a time, in order, byte-exact.
 */
const shared = shareEmulator({ start: () => startE2BEmulator({}), backend: "e2b", label: "@sbx/e2b ordered stdin tests" });

describe("orderedStdinWriter", () => {
  it("sends one call at a time, in order, joins writes made meanwhile, and fails only the writes a failed call carried", async () => {
    const calls: string[] = [];
    let inFlight = 0;
    let mostInFlight = 0;
    const write = orderedStdinWriter({
      send: async (data) => {
        inFlight++;
        mostInFlight = Math.max(mostInFlight, inFlight);
        await new Promise((resolve) => setTimeout(resolve, 5));
        inFlight--;
        const text = Buffer.from(data).toString();
        calls.push(text);
        if (text.includes("bad")) throw new Error("refused");
      },
    });
    const outcomes = await Promise.allSettled([write(Buffer.from("a")), write(Buffer.from("b")), write(Buffer.from("c"))]);
    expect(outcomes.map((outcome) => outcome.status)).toEqual(["fulfilled", "fulfilled", "fulfilled"]);
    // The first leaves alone; the two made while it was in flight go together.
    expect(calls).toEqual(["a", "bc"]);
    const failed = write(Buffer.from("bad"));
    const later = await Promise.allSettled([failed]).then(() => write(Buffer.from("d")));
    expect(await failed.catch((error: unknown) => (error as Error).message)).toBe("refused");
    expect(later).toBeUndefined();
    expect(calls.slice(2)).toEqual(["bad", "d"]);
    expect(mostInFlight).toBe(1);
  });

  it("never joins past MAX_STDIN_CALL_BYTES, and sends a single larger write whole", async () => {
    const sizes: number[] = [];
    const write = orderedStdinWriter({
      send: async (data) => {
        sizes.push(data.byteLength);
        await new Promise((resolve) => setTimeout(resolve, 1));
      },
    });
    const half = MAX_STDIN_CALL_BYTES / 2;
    await Promise.all([
      write(new Uint8Array(1)),
      write(new Uint8Array(half)),
      write(new Uint8Array(half)),
      write(new Uint8Array(1)),
      write(new Uint8Array(MAX_STDIN_CALL_BYTES * 3)),
    ]);
    expect(sizes).toEqual([1, MAX_STDIN_CALL_BYTES, 1, MAX_STDIN_CALL_BYTES * 3]);
  });
});

describe("stdin of an envd process through the emulator", () => {
  it("carries 300 binary writes made without waiting, and one 4 MiB write, byte-exact and in order", async ({ skip }) => {
    if (!shared.emulator) return skip(`E2B emulator unavailable: ${shared.unavailable}`);
    const { Sandbox } = await import("@e2b/code-interpreter");
    const driver = new E2BDriver(await Sandbox.create({ ...shared.emulator.connectionOptions, allowInternetAccess: false }), {
      audit: testDriverAudit(),
      user: undefined,
      requestTimeoutMs: undefined,
    });
    try {
      const received = createHash("sha256");
      let receivedBytes = 0;
      const process = await driver.spawn({
        command: "cat",
        cwd: driver.workspace,
        env: { PATH: "/usr/local/bin:/usr/bin:/bin" },
        stdin: true,
        onStdout: (chunk) => {
          received.update(chunk);
          receivedBytes += chunk.byteLength;
        },
        onStderr: () => {},
      });
      const sent = createHash("sha256");
      const writes: Promise<void>[] = [];
      let sentBytes = 0;
      for (let index = 0; index < 300; index++) {
        // Every byte value, NUL and invalid UTF-8 among them.
        const chunk = randomBytes(1 + (index % 7) * 1000);
        sent.update(chunk);
        sentBytes += chunk.byteLength;
        writes.push(process.writeStdin(chunk));
      }
      const large = randomBytes(4 * 1024 * 1024);
      sent.update(large);
      sentBytes += large.byteLength;
      writes.push(process.writeStdin(large));
      await Promise.all(writes);
      await process.closeStdin();
      expect(await process.exit).toMatchObject({ exitCode: 0 });
      expect(receivedBytes).toBe(sentBytes);
      expect(received.digest("hex")).toBe(sent.digest("hex"));
    } finally {
      await driver.destroy();
    }
  });
});
