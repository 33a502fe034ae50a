import { getEventListeners } from "node:events";
import { describe, expect, it } from "vitest";
import { drainCommandOutput, pumpCommandOutput } from "../src/command-output.js";

/** A stream fed by the test: `push` a chunk, `end` it, `fail` it. */
function controlledStream() {
  let controller!: ReadableStreamDefaultController<Uint8Array>;
  const stream = new ReadableStream<Uint8Array>({ start: (given) => void (controller = given) });
  return {
    stream,
    push: (bytes: number) => controller.enqueue(new Uint8Array(bytes)),
    end: () => controller.close(),
    fail: (error: Error) => controller.error(error),
  };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function pumped() {
  const stdout = controlledStream();
  const stderr = controlledStream();
  let delivered = 0;
  const output = pumpCommandOutput(
    { stdout: stdout.stream, stderr: stderr.stream },
    { onStdout: (chunk) => (delivered += chunk.byteLength), onStderr: () => {} },
  );
  return { stdout, stderr, output, delivered: () => delivered };
}

describe("drainCommandOutput: a finished command's output ends at its end, or says why not", () => {
  it("keeps reading while chunks keep arriving, however long past the quiet window, without asking about background processes", async () => {
    const { stdout, stderr, output, delivered } = pumped();
    let checks = 0;
    const draining = drainCommandOutput(output, { quietWindowMs: 300, stallLimitMs: 5_000, commandStillRuns: async () => (checks++, true) });
    for (let chunk = 0; chunk < 40; chunk++) {
      stdout.push(1000);
      await sleep(15);
    }
    stdout.end();
    stderr.end();
    expect(await draining).toEqual({ kind: "complete" });
    expect(delivered()).toBe(40_000);
    expect(checks).toBe(0);
  });

  it("cuts quiet output held open by a background process of the command", async () => {
    const { stdout, output } = pumped();
    stdout.push(10);
    expect(await drainCommandOutput(output, { quietWindowMs: 30, stallLimitMs: 1_000, commandStillRuns: async () => true })).toEqual({
      kind: "held-by-background-child",
    });
    output.cancel();
  });

  it("keeps waiting through quiet windows while no process of the command is left, and takes the end when it comes", async () => {
    const { stdout, stderr, output, delivered } = pumped();
    let checks = 0;
    const draining = drainCommandOutput(output, { quietWindowMs: 20, stallLimitMs: 5_000, commandStillRuns: async () => (checks++, false) });
    await sleep(150);
    stdout.push(7);
    stdout.end();
    stderr.end();
    expect(await draining).toEqual({ kind: "complete" });
    expect(delivered()).toBe(7);
    expect(checks).toBeGreaterThan(1);
  });

  it("reports output whose end never arrives as stalled, not complete", async () => {
    const { output } = pumped();
    const end = await drainCommandOutput(output, { quietWindowMs: 20, stallLimitMs: 100, commandStillRuns: async () => false });
    expect(end.kind).toBe("stalled");
    output.cancel();
  });

  it("reports a stream's error after exit with the error itself", async () => {
    const { stdout, output } = pumped();
    const broken = new Error("stream broke");
    stdout.push(5);
    stdout.fail(broken);
    expect(await drainCommandOutput(output, { quietWindowMs: 1_000, stallLimitMs: 5_000, commandStillRuns: async () => false })).toEqual({
      kind: "failed",
      error: broken,
    });
  });

  it("leaves no listener on the signal once the drain ended: the driver's signal lives as long as the sandbox, across every command", async () => {
    const sandboxEnded = new AbortController();
    for (let command = 0; command < 20; command++) {
      const { stdout, stderr, output } = pumped();
      stdout.end();
      stderr.end();
      expect(await drainCommandOutput(output, { commandStillRuns: async () => false, signal: sandboxEnded.signal })).toEqual({ kind: "complete" });
    }
    expect(getEventListeners(sandboxEnded.signal, "abort")).toHaveLength(0);
    const { output } = pumped();
    const draining = drainCommandOutput(output, { quietWindowMs: 50, commandStillRuns: async () => false, signal: sandboxEnded.signal });
    expect(getEventListeners(sandboxEnded.signal, "abort")).toHaveLength(1);
    sandboxEnded.abort();
    expect(await draining).toEqual({ kind: "abandoned" });
    expect(getEventListeners(sandboxEnded.signal, "abort")).toHaveLength(0);
  });
});
