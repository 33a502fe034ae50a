import { afterAll, beforeAll, expect, it } from "vitest";
import type { Sandbox } from "@sbx/core";
import Docker from "dockerode";
import { dockerContainer } from "../src/index.js";
import { probeContainer } from "../src/sandbox-lost.js";
import { createTestSandbox, describeWithDocker, docker } from "./docker-test-environment.js";

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
    expect(exists).toBe(false);
    console.log(
      `engine requests for files.exists() of a missing path: ${requests.map((request) => `${request.method} ${request.path.replace(/[0-9a-f]{64}/, "<id>")}`).join(", ")}`,
    );
    const execCreates = requests.filter((request) => /^\/containers\/[^/]+\/exec$/.test(request.path));
    expect(execCreates).toHaveLength(1);
    expect(requests.filter((request) => !isExecRequest(request))).toEqual([]);
  });
});

describeWithDocker("probe(): one bounded look at the engine (issue 20)", () => {
  it("running while the container runs, gone once it is removed behind sbx's back; one inspect each", async () => {
    const sandbox = await createTestSandbox();
    const container = dockerContainer(sandbox);
    const signal = AbortSignal.timeout(30_000);
    let answer: string | undefined;
    const running = await engineRequestsDuring(sandbox, async () => {
      answer = await probeContainer(container, { signal });
    });
    expect(answer).toBe("running");
    expect(running.map((request) => request.method + " " + request.path.replace(/[0-9a-f]{64}/, "<id>"))).toEqual(["GET /containers/<id>/json"]);
    await docker.getContainer(sandbox.id).remove({ force: true, v: true });
    expect(await probeContainer(container, { signal })).toBe("gone");
    await sandbox.kill();
  });

  it("unknown when the engine cannot be reached, and when the caller's signal is already aborted", async () => {
    const sandbox = await createTestSandbox();
    const unreachable = new Docker({ socketPath: "/nonexistent/sbx-probe/docker.sock" }).getContainer(sandbox.id);
    expect(await probeContainer(unreachable, { signal: AbortSignal.timeout(30_000) })).toBe("unknown");
    expect(await probeContainer(dockerContainer(sandbox), { signal: AbortSignal.abort() })).toBe("unknown");
    await sandbox.kill();
  });
});
