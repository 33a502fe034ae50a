/**
 * How many hands a Docker call passes through (issue 20, ADR 0044): the function frames of `@sbx/core` and of this
 * adapter between the public call and `DockerDriver`'s method, counted from `new Error().stack` recorded when the
 * method is called (as `packages/core/test/call-hands.test.ts` does with an in-memory driver). The figures are bounds,
 * so a wrapper put around the Docker driver again (a forwarding layer per method) fails here.
 */
import { afterEach, beforeEach, expect, it } from "vitest";
import type { SpawnRequest } from "@sbx/core/adapter";
import { DockerDriver } from "../src/docker-driver.js";
import { createTestSandbox, describeWithDocker } from "./docker-test-environment.js";

/** The frames of sbx's own code in a recorded stack: core (its source or its build) and this adapter's source. */
function sbxFrames(stack: string): string[] {
  return stack.split("\n").filter((line) => /[\\/]packages[\\/](core[\\/](src|dist)|docker[\\/]src)[\\/]/.test(line));
}

let savedLimit: number;
beforeEach(() => {
  savedLimit = Error.stackTraceLimit;
  Error.stackTraceLimit = 200;
});
afterEach(() => {
  Error.stackTraceLimit = savedLimit;
});

/** Records the stack at the start of every `DockerDriver` `spawn` and `readFile` while `action` runs (core binds them at create). */
async function recordStacks(action: () => Promise<void>): Promise<Map<string, string>> {
  const stacks = new Map<string, string>();
  const prototype = DockerDriver.prototype;
  // The original methods, called with the driver as `this` below.
  // eslint-disable-next-line @typescript-eslint/unbound-method -- restored and called with .call(this) only
  const { spawn, readFile } = prototype;
  prototype.spawn = function (this: DockerDriver, request: SpawnRequest) {
    stacks.set("spawn", new Error("hands").stack ?? "");
    return spawn.call(this, request);
  };
  prototype.readFile = function (this: DockerDriver, path: string, options: { signal?: AbortSignal }) {
    stacks.set("readFile", new Error("hands").stack ?? "");
    return readFile.call(this, path, options);
  };
  try {
    await action();
  } finally {
    prototype.spawn = spawn;
    prototype.readFile = readFile;
  }
  return stacks;
}

describeWithDocker("hands between the public call and the Docker driver (issue 20)", () => {
  it("commands.run on exec ≤ 4 and files.read ≤ 5: core attaches the agent, no forwarder around the driver", async () => {
    const stacks = await recordStacks(async () => {
      const sandbox = await createTestSandbox({}, { agentCommands: "off" });
      try {
        await sandbox.files.write("notes.txt", "hello");
        expect(await sandbox.files.read("notes.txt")).toBe("hello");
        expect((await sandbox.commands.run("echo hi")).stdout).toBe("hi\n");
      } finally {
        await sandbox.kill();
      }
    });
    const hands = {
      "commands.run": sbxFrames(stacks.get("spawn") ?? ""),
      "files.read": sbxFrames(stacks.get("readFile") ?? ""),
    };
    if (process.env.SBX_SHOW_HANDS)
      for (const [name, frames] of Object.entries(hands)) console.log(name, frames.map((line) => line.trim()).join("\n"));
    console.log(`Docker hands: ${JSON.stringify(Object.fromEntries(Object.entries(hands).map(([name, frames]) => [name, frames.length])))}`);
    expect(hands["commands.run"].length).toBeGreaterThan(0);
    expect(hands["commands.run"].length).toBeLessThanOrEqual(4);
    expect(hands["files.read"].length).toBeGreaterThan(0);
    expect(hands["files.read"].length).toBeLessThanOrEqual(5);
  });
});
