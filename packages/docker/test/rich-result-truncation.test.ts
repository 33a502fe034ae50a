import type { Sandbox } from "@sbx/core";
import { afterAll, beforeAll, expect, it } from "vitest";
import { createTestSandbox, describeWithDocker } from "./docker-test-environment.js";

/**
 * A rich result over the caps is dropped and said so (ADR 0028): on Docker, through the sandbox agent in the
 * container, a 17 MiB last expression and a 20 MiB `display()` come back as `truncated.results: true`.
 */
describeWithDocker("rich results over the caps on Docker", () => {
  let sandbox: Sandbox;
  beforeAll(async () => {
    sandbox = await createTestSandbox();
  });
  afterAll(async () => {
    await sandbox?.kill();
  });

  it("a 17 MiB last expression is no result, truncated", async () => {
    const execution = await sandbox.runCode("'x' * (17 * 1024 * 1024)");
    expect(execution.error).toBeNull();
    expect(execution.results).toEqual([]);
    expect(execution.truncated.results).toBe(true);
  });

  it("a 20 MiB display() is dropped and said so; the results around it are kept", async () => {
    const execution = await sandbox.runCode("display('before')\ndisplay('y' * (20 * 1024 * 1024))\n'last'");
    expect(execution.results?.map((result) => result.data["text/plain"])).toEqual(["'before'", "'last'"]);
    expect(execution.truncated.results).toBe(true);
  });
});
