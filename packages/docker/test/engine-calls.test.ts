import { afterAll, beforeAll, expect, it } from "vitest";
import type { Sandbox } from "@sbx/core";
import { dockerContainer } from "../src/index.js";
import { createTestSandbox, describeWithDocker } from "./docker-test-environment.js";

/** One engine API request, as dockerode dials it. */
interface Dialled {
  readonly method: string;
  readonly path: string;
}

/** Counts every request the sandbox's dockerode client sends while `action` runs. */
async function engineRequestsDuring(sandbox: Sandbox, action: () => Promise<unknown>): Promise<Dialled[]> {
  const modem = dockerContainer(sandbox).modem as { dial: (options: { method: string; path: string }, callback: unknown) => unknown };
  const original = modem.dial;
  const dialled: Dialled[] = [];
  modem.dial = function (this: unknown, options, callback) {
    dialled.push({ method: options.method, path: options.path.replace(/\?.*$/, "") });
    return original.call(this, options, callback);
  };
  try {
    await action();
  } finally {
    modem.dial = original;
  }
  return dialled;
}

/** What one exec costs on the engine: create, start, and the inspects that read its exit code. */
function isExecRequest(request: Dialled): boolean {
  return /^\/containers\/[^/]+\/exec$/.test(request.path) || /^\/exec\/[^/]+\/(start|json)$/.test(request.path);
}

describeWithDocker("engine calls per file operation (issue 20)", () => {
  let sandbox: Sandbox;
  beforeAll(async () => {
    sandbox = await createTestSandbox();
  });
  afterAll(async () => {
    await sandbox?.kill();
  });

  it("files.exists() of a missing path costs one exec and nothing else: no container inspect", async () => {
    let exists: boolean | undefined;
    const requests = await engineRequestsDuring(sandbox, async () => {
      exists = await sandbox.files.exists("no-such-file.txt");
    });
    console.log("ENGINE-REQUESTS", JSON.stringify(requests.map((r) => `${r.method} ${r.path.replace(/[0-9a-f]{64}/g, "<id>")}`)));
    expect(exists).toBe(false);
    const execCreates = requests.filter((request) => /^\/containers\/[^/]+\/exec$/.test(request.path));
    expect(execCreates).toHaveLength(1);
    expect(requests.filter((request) => !isExecRequest(request))).toEqual([]);
  });
});
