import { isSbxError, type Sandbox } from "@sbx/core";
import { afterAll, beforeAll, expect, it } from "vitest";
import { startStallableSocketProxy, type StallableSocketProxy } from "./fixtures/stallable-socket-proxy.js";
import { createTestSandbox, describeWithDocker, docker } from "./docker-test-environment.js";

async function outcomeOf(work: () => Promise<unknown>): Promise<{ error: unknown; seconds: number }> {
  const started = Date.now();
  try {
    await work();
    return { error: undefined, seconds: (Date.now() - started) / 1000 };
  } catch (error) {
    return { error, seconds: (Date.now() - started) / 1000 };
  }
}

/**
 * Finding 6 of issue 7: with the engine socket stalled mid-session, every call must still settle with a typed error:
 * the deadline starts before the first engine call, and kill() is bounded. The engine is reached through a proxy
 * socket the test stalls (the Docker provider's `socketPath` setting points at it).
 */
describeWithDocker("a stalled engine", () => {
  let proxy: StallableSocketProxy;
  let sandbox: Sandbox;
  beforeAll(async () => {
    proxy = await startStallableSocketProxy();
    sandbox = await createTestSandbox({ metadata: { test: "stalled-engine" } }, { socketPath: proxy.socketPath });
  });
  afterAll(async () => {
    proxy?.resume();
    // The container is ours: remove it through the real socket whatever the bounded kill() reported.
    if (sandbox)
      await docker
        .getContainer(sandbox.id)
        .remove({ force: true })
        .catch(() => {});
    await proxy?.close();
  });

  it("commands.run({ timeoutMs: 2000 }), files.read and kill() all settle with typed errors while the engine answers nothing", async () => {
    expect((await sandbox.commands.run("echo before-the-stall")).stdout).toBe("before-the-stall\n");
    await sandbox.files.write("kept.txt", "kept");
    proxy.stall();
    const running = outcomeOf(() => sandbox.commands.run("echo during-the-stall", { timeoutMs: 2_000 }));
    const reading = outcomeOf(() => sandbox.files.read("kept.txt", { timeoutMs: 2_000 }));
    // Let both calls reach the (stalled) engine before the sandbox is closed under them.
    await new Promise((resolve) => setTimeout(resolve, 200));
    const [run, read, kill] = await Promise.all([running, reading, outcomeOf(() => sandbox.kill())]);
    console.info(`[stalled engine] commands.run settled after ${run.seconds} s, files.read after ${read.seconds} s, kill() after ${kill.seconds} s`);
    expect(isSbxError(run.error, "SBX_TIMEOUT")).toBe(true);
    expect((run.error as { killed: boolean }).killed).toBe(false);
    expect((run.error as Error).message).toMatch(/could not verify/);
    expect(isSbxError(read.error, "SBX_TIMEOUT")).toBe(true);
    expect((read.error as { timeoutMs: number }).timeoutMs).toBe(2_000);
    expect(isSbxError(kill.error, "SBX_TIMEOUT")).toBe(true);
    expect(sandbox.closed).toBe(true);
  });
});
