import { spawnSync } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Sandbox } from "../src/index.ts";
import { withCodeAgent } from "../src/adapter.ts";
import { sandboxOverAgentDriver } from "./support/host-agent-sandbox.ts";
import { createHostProcessDriver } from "./support/host-process-driver.ts";

/**
 * A rich result over the caps is dropped, and a dropped result is a truncated run (ADR 0028): `truncated.results`
 * is true, never a run that looks as if it had no result. Through the sandbox agent on the host's python3.
 */
const hasPython = spawnSync("python3", ["-c", "import sys; assert sys.version_info >= (3, 8)"]).status === 0;
if (!hasPython) console.warn("\n[sbx] SKIPPING the rich-result truncation tests: no python3 >= 3.8 on PATH\n");

let directory: string;
let sandbox: Sandbox;
beforeAll(async () => {
  directory = await mkdtemp(join(tmpdir(), "sbx-core-results-"));
  sandbox = sandboxOverAgentDriver(withCodeAgent(createHostProcessDriver(directory), { backend: "host-agent-test" }));
});
afterAll(async () => {
  await sandbox?.kill();
  await rm(directory, { recursive: true, force: true });
});

describe.skipIf(!hasPython)("rich results over the caps", () => {
  it("a 17 MiB last expression (over the agent's 16 MiB) comes back as no result, truncated", async () => {
    const execution = await sandbox.runCode("'x' * (17 * 1024 * 1024)");
    expect(execution.results).toEqual([]);
    expect(execution.truncated.results).toBe(true);
    expect(execution.error).toBeNull();
  });

  it("a 50 MiB last expression likewise", async () => {
    const execution = await sandbox.runCode("'x' * (50 * 1024 * 1024)");
    expect(execution.results).toEqual([]);
    expect(execution.truncated.results).toBe(true);
  });

  it("a 70 MiB last expression (past the agent's frame size) is truncated too, not a lost interpreter", async () => {
    const execution = await sandbox.runCode("'x' * (70 * 1024 * 1024)");
    expect(execution.results).toEqual([]);
    expect(execution.truncated.results).toBe(true);
    expect(execution.error).toBeNull();
  });

  it("a 20 MiB display() is dropped and said so; the small results around it are kept in order", async () => {
    const execution = await sandbox.runCode("display('before')\ndisplay('y' * (20 * 1024 * 1024))\ndisplay('after')\n'last'");
    expect(execution.results?.map((result) => result.data["text/plain"])).toEqual(["'before'", "'after'", "'last'"]);
    expect(execution.truncated.results).toBe(true);
  });

  it("results within the caps are not reported truncated", async () => {
    const execution = await sandbox.runCode("display('a' * 1024)\n'b'");
    expect(execution.results).toHaveLength(2);
    expect(execution.truncated.results).toBe(false);
  });
});
