/**
 * The warm pool (ADR 0050) on a real Docker Engine: concurrent acquires never share a container, the agent is started
 * before acquire, per-acquire secrets, the lifetime from acquire enforced by the host while the container's own
 * deadline (idle bound + lifetime) stays out of the sandbox's reach, and close removing every idle container.
 */
import { spawn } from "node:child_process";
import { once } from "node:events";
import { createSandboxPool } from "@sbx/core";
import { expect, it } from "vitest";
import { createSandboxProvider } from "../src/index.js";
import { describeWithDocker, docker, TEST_IMAGE } from "./docker-test-environment.js";

/** True once the container is removed or no longer running. */
async function gone(id: string): Promise<boolean> {
  try {
    const inspect = await docker.getContainer(id).inspect();
    return !inspect.State.Running;
  } catch (error) {
    return (error as { statusCode?: number }).statusCode === 404;
  }
}

/** The ids of this test process's running sbx containers for one pool (its metadata label). */
async function poolContainers(marker: string): Promise<string[]> {
  const containers = await docker.listContainers({ filters: { label: [`sbx.metadata.pool-test=${marker}`] } });
  return containers.map((container) => container.Id);
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function eventually(check: () => Promise<boolean>, timeoutMs: number): Promise<void> {
  const start = Date.now();
  while (!(await check())) {
    if (Date.now() - start > timeoutMs) throw new Error("condition not met in time");
    await sleep(100);
  }
}

describeWithDocker("warm pool on Docker", () => {
  it(
    "two concurrent acquires get two different containers with the agent already running; secrets are per acquire; close removes the idle ones",
    { timeout: 180_000 },
    async () => {
      const marker = `p${process.pid}-${Date.now()}`;
      const pool = await createSandboxPool(createSandboxProvider({ image: TEST_IMAGE }), {
        size: 2,
        createOptions: { metadata: { "pool-test": marker } },
      });
      try {
        await pool.warm({ signal: AbortSignal.timeout(150_000) });
        const idleIds = await poolContainers(marker);
        expect(idleIds.length).toBe(2);
        const [first, second] = await Promise.all([pool.acquire({ secrets: { API_TOKEN: "docker-pool-secret-91b2" } }), pool.acquire()]);
        expect(first.id).not.toBe(second.id);
        expect(idleIds).toContain(first.id);
        expect(idleIds).toContain(second.id);
        // The agent was started at pool time: it (and the worker it forks) runs in the container before the caller's first command.
        const agents = await docker.getContainer(first.id).top({ ps_args: "-eo pid,args" });
        expect(agents.Processes.filter((row: string[]) => row[1]?.startsWith("python3 -I -u -c")).length).toBeGreaterThanOrEqual(1);
        expect((await first.commands.run('printf %s "$API_TOKEN"')).stdout).toBe("docker-pool-secret-91b2");
        expect((await second.commands.run('printf %s "${API_TOKEN-unset}"')).stdout).toBe("unset");
        // The secret reached neither the container's config (made before anyone asked) nor the audit record.
        const inspect = await docker.getContainer(first.id).inspect();
        expect(JSON.stringify(inspect)).not.toContain("docker-pool-secret-91b2");
        expect(JSON.stringify(first.audit())).not.toContain("docker-pool-secret-91b2");
        const pooled = first.audit().policies.pool!.applied as Record<string, unknown>;
        expect(pooled.pooled).toBe(true);
        expect(pooled.createdAt).toBe(first.audit().createdAt);
        await Promise.all([first.kill(), second.kill()]);
        expect(await gone(first.id)).toBe(true);
        // The pool refills to two idle containers, then close removes them.
        await eventually(async () => pool.stats().idle === 2, 120_000);
        const refilled = (await poolContainers(marker)).filter((id) => id !== first.id && id !== second.id);
        expect(refilled.length).toBe(2);
        await pool.close();
        for (const id of refilled) expect(await gone(id)).toBe(true);
      } finally {
        await pool.close();
      }
    },
  );

  it(
    "an acquired sandbox ends at its lifetime from acquire; the container's own deadline is the idle bound plus the lifetime, and the sandbox cannot move it",
    { timeout: 180_000 },
    async () => {
      await using pool = await createSandboxPool(createSandboxProvider({ image: TEST_IMAGE }), {
        size: 1,
        maxIdleMs: 60_000,
        createOptions: { timeoutMs: 4_000 },
      });
      await pool.warm({ signal: AbortSignal.timeout(150_000) });
      const sandbox = await pool.acquire();
      // The in-container deadline (root, out of the sandbox user's reach) was given 64 s: idle bound + lifetime.
      const deadline = await sandbox.commands.run("ps -eo user=,args= | awk '$1 == \"root\"' | grep -c 'sleep 64' || true");
      expect(deadline.stdout.trim()).toBe("1");
      const killAttempt = await sandbox.commands.run("pkill -f 'sleep 64'; echo $?");
      expect(killAttempt.stdout.trim()).not.toBe("0");
      await eventually(() => gone(sandbox.id), 30_000);
      expect(sandbox.closed).toBe(true);
    },
  );

  it(
    "a pool's idle containers end with a host process that is SIGKILLed (the dead-man's switch holds for pooled sandboxes)",
    { timeout: 180_000 },
    async () => {
      const script = `
      import { createSandboxPool } from "@sbx/core";
      import { createSandboxProvider } from "./dist/index.js";
      const pool = await createSandboxPool(createSandboxProvider({ image: ${JSON.stringify(TEST_IMAGE)} }), { size: 2 });
      await pool.warm({ signal: AbortSignal.timeout(150000) });
      const sandbox = await pool.acquire();
      process.stdout.write(JSON.stringify({ acquired: sandbox.id }) + "\\n");
      setInterval(() => {}, 1000);
    `;
      const child = spawn(process.execPath, ["--input-type=module", "-e", script], {
        cwd: new URL("..", import.meta.url).pathname,
        stdio: ["ignore", "pipe", "inherit"],
      });
      let output = "";
      child.stdout.setEncoding("utf8");
      child.stdout.on("data", (text: string) => (output += text));
      await eventually(async () => output.includes("\n"), 160_000);
      const acquired = (JSON.parse(output.split("\n")[0]!) as { acquired: string }).acquired;
      const owned = await docker.listContainers({ filters: { label: [`sbx.owner.pid=${child.pid}`] } });
      const ids = owned.map((container) => container.Id);
      // The acquired one and the idle ones that refilled (at least the acquired one and one idle).
      expect(ids).toContain(acquired);
      expect(ids.length).toBeGreaterThanOrEqual(2);
      child.kill("SIGKILL");
      await once(child, "exit");
      try {
        for (const id of ids) await eventually(() => gone(id), 60_000);
      } finally {
        // A refill the kill interrupted between the engine's create and start leaves a container that never ran (what
        // sweepOrphans() is for): this test's own child made it, so the test removes it.
        const leftovers = await docker.listContainers({ all: true, filters: { label: [`sbx.owner.pid=${child.pid}`] } });
        await Promise.all(
          leftovers.map((container) =>
            docker
              .getContainer(container.Id)
              .remove({ force: true, v: true })
              .catch(() => {}),
          ),
        );
      }
    },
  );
});
