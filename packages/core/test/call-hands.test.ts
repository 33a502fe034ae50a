/**
 * How many hands a call passes through: the function frames inside core's `src/` between the public call and the
 * driver method (issue 20, ADR 0037). A driver records `new Error().stack` when a method is called; the test counts
 * the frames from core's source in it. The figures are bounds, so a new wrapper around every driver call fails here.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createSandbox, defineCapabilities, type SandboxLogEntry } from "../src/index.ts";
import { createMemoryProvider, type MemoryDriver } from "./support/memory-driver.ts";

/** The frames of core's own source in a recorded stack (the driver's frame and the test's are elsewhere). */
function coreFrames(stack: string): string[] {
  return stack.split("\n").filter((line) => /[\\/]packages[\\/]core[\\/]src[\\/]/.test(line));
}

let savedLimit: number;
beforeEach(() => {
  savedLimit = Error.stackTraceLimit;
  Error.stackTraceLimit = 200;
});
afterEach(() => {
  Error.stackTraceLimit = savedLimit;
});

/** Records the stack at the start of the driver's `spawn`, `readFile` and `runCode`. */
function recordStacks(driver: MemoryDriver): Map<string, string> {
  const stacks = new Map<string, string>();
  const spawn = driver.spawn.bind(driver);
  const readFile = driver.readFile.bind(driver);
  const runCode = driver.runCode!.bind(driver);
  driver.spawn = (request) => {
    stacks.set("spawn", new Error("hands").stack ?? "");
    return spawn(request);
  };
  driver.readFile = (path) => {
    stacks.set("readFile", new Error("hands").stack ?? "");
    return readFile(path);
  };
  driver.runCode = (request) => {
    stacks.set("runCode", new Error("hands").stack ?? "");
    return runCode(request);
  };
  return stacks;
}

async function measure(options: { logger?: (entry: SandboxLogEntry) => void }): Promise<Record<string, number>> {
  const provider = createMemoryProvider({
    backend: "hands",
    capabilities: defineCapabilities({ STATEFUL_CODE: true, languages: ["python"] }),
    driver: { codeChannel: true, codeContexts: true },
  });
  let stacks = new Map<string, string>();
  // The driver records its stacks from the start: core resolves a driver's methods once, when it makes the sandbox.
  const recording = {
    ...provider,
    create: async (request: Parameters<typeof provider.create>[0]) => {
      const driver = (await provider.create(request)) as MemoryDriver;
      stacks = recordStacks(driver);
      return driver;
    },
  };
  const sandbox = await createSandbox(recording, options);
  await sandbox.files.write("notes.txt", "hello");
  expect(await sandbox.commands.run("echo hi").then((result) => result.exitCode)).toBe(0);
  expect(await sandbox.files.read("notes.txt")).toBe("hello");
  const context = await sandbox.createCodeContext();
  await sandbox.runCode("1", { contextId: context.id });
  await sandbox.kill();
  const hands = {
    "commands.run": coreFrames(stacks.get("spawn")!).length,
    "files.read": coreFrames(stacks.get("readFile")!).length,
    "runCode (context)": coreFrames(stacks.get("runCode")!).length,
  };
  if (process.env.SBX_SHOW_HANDS)
    for (const [name, stack] of stacks)
      console.log(
        name,
        coreFrames(stack)
          .map((line) => line.trim())
          .join("\n"),
      );
  console.log(`hands${options.logger ? " (with a logger)" : ""}: ${JSON.stringify(hands)}`);
  return hands;
}

describe("hands between the public call and the driver", () => {
  it("commands.run ≤ 5, files.read ≤ 7, runCode with a context ≤ 5", async () => {
    const hands = await measure({});
    expect(hands["commands.run"]).toBeGreaterThan(0);
    expect(hands["commands.run"]).toBeLessThanOrEqual(5);
    expect(hands["files.read"]).toBeLessThanOrEqual(7);
    expect(hands["runCode (context)"]).toBeLessThanOrEqual(5);
  });

  it("the same with a logger: logging is part of the channel, not another hand", async () => {
    const hands = await measure({ logger: () => {} });
    expect(hands["commands.run"]).toBeLessThanOrEqual(5);
    expect(hands["files.read"]).toBeLessThanOrEqual(7);
    expect(hands["runCode (context)"]).toBeLessThanOrEqual(5);
  });
});
