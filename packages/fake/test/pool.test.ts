/**
 * The warm pool (ADR 0050) on the fake: each sandbox handed out once, per-acquire secrets and credentials, the
 * lifetime from acquire, the idle bound, close and failures. The same behaviour on Docker: packages/docker/test/pool.test.ts.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  auditRecordSchema,
  createSandboxPool,
  credential,
  isSbxError,
  type CredentialRevokeRequest,
  type Sandbox,
  type SandboxProviderV1,
} from "@sbx/core";
import type { ProviderCreateRequest, SandboxDriverV1 } from "@sbx/core/adapter";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createSandboxProvider } from "../src/index.js";

let stateDirectory: string;
const previousStateDirectory = process.env.SBX_STATE_DIR;

beforeEach(async () => {
  stateDirectory = await mkdtemp(join(tmpdir(), "sbx-fake-pool-"));
  process.env.SBX_STATE_DIR = stateDirectory;
});

afterEach(async () => {
  if (previousStateDirectory === undefined) delete process.env.SBX_STATE_DIR;
  else process.env.SBX_STATE_DIR = previousStateDirectory;
  await rm(stateDirectory, { recursive: true, force: true });
});

/** The fake provider, remembering every driver it created (to ask each, behind the pool's back, whether it still exists). */
function countingFake(overrides: { failCreates?: number } = {}) {
  const fake = createSandboxProvider();
  const drivers: SandboxDriverV1[] = [];
  const requests: ProviderCreateRequest[] = [];
  let failures = overrides.failCreates ?? 0;
  const provider: SandboxProviderV1 = {
    ...fake,
    detect: (options) => fake.detect(options),
    async create(request) {
      requests.push(request);
      if (failures > 0) {
        failures -= 1;
        throw new Error("the backend refused this create");
      }
      const driver = await fake.create(request);
      drivers.push(driver);
      return driver;
    },
  };
  const gone = async (driver: SandboxDriverV1) => (await driver.probe!({ signal: new AbortController().signal })) === "gone";
  return { provider, drivers, requests, gone };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function eventually(check: () => boolean | Promise<boolean>, timeoutMs = 10_000): Promise<void> {
  const start = Date.now();
  while (!(await check())) {
    if (Date.now() - start > timeoutMs) throw new Error("condition not met in time");
    await sleep(20);
  }
}

describe("warm pool on the fake", () => {
  it("hands each sandbox out once: six concurrent acquires from a pool of two get six different sandboxes, none of them used before", async () => {
    const { provider, drivers } = countingFake();
    await using pool = await createSandboxPool(provider, { size: 2, refillConcurrency: 3 });
    await pool.warm();
    const sandboxes = await Promise.all(Array.from({ length: 6 }, () => pool.acquire()));
    const ids = sandboxes.map((sandbox) => sandbox.id);
    expect(new Set(ids).size).toBe(6);
    // Every sandbox handed out is one the pool created, and no command ran in it before the caller's.
    for (const sandbox of sandboxes) {
      expect(drivers.map((driver) => driver.id)).toContain(sandbox.id);
      const result = await sandbox.commands.run("ls -A . | wc -l");
      expect(result.stdout.trim()).toBe("0");
    }
    expect(pool.stats().acquired).toBe(6);
    await Promise.all(sandboxes.map((sandbox) => sandbox.kill()));
  });

  it("two acquires racing for the last idle sandbox never share it", async () => {
    const { provider } = countingFake();
    await using pool = await createSandboxPool(provider, { size: 1 });
    await pool.warm();
    const [first, second] = await Promise.all([pool.acquire(), pool.acquire()]);
    expect(first.id).not.toBe(second.id);
    await first.commands.run("echo mine > owner.txt");
    expect(await second.files.exists("owner.txt")).toBe(false);
    await Promise.all([first.kill(), second.kill()]);
  });

  it("the audit record says the sandbox came from the pool, when it was created and when acquired; the lifetime counts from acquire", async () => {
    const { provider, requests } = countingFake();
    await using pool = await createSandboxPool(provider, { size: 1, maxIdleMs: 60_000, createOptions: { timeoutMs: 30_000 } });
    await pool.warm();
    await sleep(50);
    await using sandbox = await pool.acquire();
    const record = sandbox.audit();
    expect(auditRecordSchema.safeParse(record).success).toBe(true);
    const applied = record.policies.pool!.applied as Record<string, unknown>;
    expect(applied.pooled).toBe(true);
    expect(applied.createdAt).toBe(record.createdAt);
    expect(Date.parse(applied.acquiredAt as string)).toBeGreaterThanOrEqual(Date.parse(record.createdAt) + 50);
    expect(Date.parse(applied.endsAt as string) - Date.parse(applied.acquiredAt as string)).toBe(30_000);
    expect(Date.parse(applied.backendDeadline as string) - Date.parse(record.createdAt)).toBe(90_000);
    // The backend was asked for the idle bound plus the lifetime, and for no secrets.
    expect(requests[0]!.options.timeoutMs).toBe(90_000);
    expect(requests[0]!.options.secrets).toEqual({});
  });

  it("secrets are given per acquire: one caller's secret is in its sandbox only, and never in the audit record", async () => {
    const { provider, requests } = countingFake();
    await using pool = await createSandboxPool(provider, { size: 2 });
    await pool.warm();
    await using first = await pool.acquire({ secrets: { API_TOKEN: "first-caller-secret-7f3a" } });
    await using second = await pool.acquire();
    expect((await first.commands.run('printf %s "$API_TOKEN"')).stdout).toBe("first-caller-secret-7f3a");
    expect((await second.commands.run('printf %s "${API_TOKEN-unset}"')).stdout).toBe("unset");
    expect(first.audit().environment.secrets).toEqual(["API_TOKEN"]);
    expect(JSON.stringify(first.audit())).not.toContain("first-caller-secret-7f3a");
    for (const request of requests) expect(JSON.stringify(request.options)).not.toContain("first-caller-secret-7f3a");
  });

  it("a credential given at acquire is issued for the sandbox handed out and revoked when it ends", async () => {
    const revoked: CredentialRevokeRequest[] = [];
    const issuedFor: string[] = [];
    const source = credential({
      id: "fake-pool-token",
      issue: ({ sandboxId }) => {
        issuedFor.push(sandboxId);
        return `pool-issued-${sandboxId}`;
      },
      revoke: (request) => void revoked.push(request),
    });
    const { provider } = countingFake();
    await using pool = await createSandboxPool(provider, { size: 1 });
    await pool.warm();
    expect(issuedFor).toEqual([]);
    const sandbox = await pool.acquire({ secrets: { TOKEN: source } });
    expect(issuedFor).toEqual([sandbox.id]);
    expect((await sandbox.commands.run('printf %s "$TOKEN"')).stdout).toBe(`pool-issued-${sandbox.id}`);
    await sandbox.kill();
    await eventually(() => revoked.length === 1);
    expect(revoked[0]!.sandboxId).toBe(sandbox.id);
    expect(sandbox.audit().credentials?.[0]?.outcome).toBe("revoked");
  });

  it("secrets in createOptions are refused by name: a pool never bakes them in", async () => {
    const { provider, requests } = countingFake();
    const error = await createSandboxPool(provider, { size: 1, createOptions: { secrets: { TOKEN: "x" } } }).catch((caught: unknown) => caught);
    expect(isSbxError(error, "SBX_INVALID_ARGUMENT")).toBe(true);
    expect((error as { field?: string }).field).toBe("options.createOptions.secrets");
    expect(requests.length).toBe(0);
  });

  it("initial files in createOptions are refused by name, not dropped: a pool does not write them", async () => {
    const { provider, requests } = countingFake();
    const error = await createSandboxPool(provider, { size: 1, createOptions: { files: [{ path: "a.txt", content: "a" }] } }).catch(
      (caught: unknown) => caught,
    );
    expect(isSbxError(error, "SBX_INVALID_ARGUMENT")).toBe(true);
    expect((error as { field?: string }).field).toBe("options.createOptions.files");
    expect(requests.length).toBe(0);
  });

  it("an acquired sandbox ends at its lifetime counted from acquire, though the backend was given the idle bound on top", async () => {
    const { provider } = countingFake();
    await using pool = await createSandboxPool(provider, { size: 1, maxIdleMs: 60_000, createOptions: { timeoutMs: 1_000 } });
    await pool.warm();
    await sleep(1_200);
    // Idle longer than its lifetime, yet whole: the lifetime had not started.
    const sandbox = await pool.acquire();
    expect((await sandbox.commands.run("echo alive")).stdout).toBe("alive\n");
    await eventually(() => sandbox.closed, 10_000);
    const error = await sandbox.commands.run("echo late").catch((caught: unknown) => caught);
    expect(isSbxError(error, "SBX_SANDBOX_CLOSED") || isSbxError(error, "SBX_SANDBOX_NOT_FOUND")).toBe(true);
  });

  it("an idle sandbox past maxIdleMs is destroyed and replaced", async () => {
    const { provider, drivers, gone } = countingFake();
    await using pool = await createSandboxPool(provider, { size: 1, maxIdleMs: 1_000 });
    await pool.warm();
    const first = drivers[0]!;
    await eventually(() => pool.stats().expired >= 1 && pool.stats().idle === 1);
    expect(await gone(first)).toBe(true);
    const sandbox = await pool.acquire();
    expect(sandbox.id).not.toBe(first.id);
    await sandbox.kill();
  });

  it("close destroys every idle sandbox, refuses later acquires and fails waiting ones, and leaves acquired ones to their callers", async () => {
    const { provider, drivers, gone } = countingFake();
    const pool = await createSandboxPool(provider, { size: 3 });
    await pool.warm();
    const acquired = await pool.acquire();
    await eventually(() => pool.stats().idle === 3);
    await pool.close();
    const idleDrivers = drivers.filter((driver) => driver.id !== acquired.id);
    expect(idleDrivers.length).toBe(3);
    for (const driver of idleDrivers) expect(await gone(driver)).toBe(true);
    expect((await acquired.commands.run("echo still mine")).stdout).toBe("still mine\n");
    const error = await pool.acquire().catch((caught: unknown) => caught);
    expect(isSbxError(error, "SBX_SANDBOX_CLOSED")).toBe(true);
    await acquired.kill();
  });

  it("a waiting acquire is failed by close and by its own signal", async () => {
    const { provider } = countingFake({ failCreates: 1_000 });
    const pool = await createSandboxPool(provider, { size: 1 });
    const controller = new AbortController();
    const aborted = pool.acquire({ signal: controller.signal }).catch((caught: unknown) => caught);
    controller.abort();
    expect(isSbxError(await aborted, "SBX_ABORTED")).toBe(true);
    const waiting = pool.acquire().catch((caught: unknown) => caught);
    await pool.close();
    const error = await waiting;
    // The first create fails (a waiter gets that error) or the close comes first: either way a typed error, never a sandbox.
    expect(isSbxError(error, "SBX_SANDBOX_CLOSED") || isSbxError(error, "SBX_PROVIDER")).toBe(true);
  });

  it("a create that fails reaches the waiting caller as the backend's error, and warm() rejects with it", async () => {
    const { provider } = countingFake({ failCreates: 1_000 });
    await using pool = await createSandboxPool(provider, { size: 1 });
    const error = await pool.acquire().catch((caught: unknown) => caught);
    expect(isSbxError(error, "SBX_PROVIDER")).toBe(true);
    expect((error as Error).message).toContain("the backend refused this create");
    const warmError = await pool.warm().catch((caught: unknown) => caught);
    expect(isSbxError(warmError, "SBX_PROVIDER")).toBe(true);
    // A waiter is failed only once creates failed three times in a row (one transient failure is retried unseen).
    expect(pool.stats().failed).toBeGreaterThanOrEqual(4);
    expect(pool.stats().lastError?.message).toContain("the backend refused this create");
  });

  it("the create replacing an acquired sandbox starts after the caller's first command had the CPU; a waiting caller's at once", async () => {
    const { provider, requests } = countingFake();
    await using pool = await createSandboxPool(provider, { size: 1 });
    await pool.warm();
    expect(requests.length).toBe(1);
    // An acquire that leaves no one waiting: nothing is created in the same moment (ADR 0057)...
    const first = await pool.acquire();
    expect([pool.stats().creating, requests.length]).toEqual([0, 1]);
    expect((await first.commands.run("echo first")).stdout).toBe("first\n");
    // ...but the pool does refill.
    await eventually(() => pool.stats().idle === 1);
    expect(requests.length).toBe(2);
    // A caller that finds the pool empty has its create started at once, not after the delay.
    const second = await pool.acquire();
    const third = pool.acquire();
    expect(pool.stats().waiting).toBe(1);
    // One create for the waiter and one to refill to size, both at once (refillConcurrency 2).
    expect(pool.stats().creating).toBe(2);
    await Promise.all([first.kill(), second.kill(), (await third).kill()]);
  });

  it("after a failed create the pool tries again and fills", async () => {
    const { provider, requests } = countingFake({ failCreates: 1 });
    await using pool = await createSandboxPool(provider, { size: 1 });
    const sandbox: Sandbox = await pool.acquire();
    expect((await sandbox.commands.run("echo ok")).stdout).toBe("ok\n");
    expect(pool.stats().failed).toBe(1);
    expect(requests.length).toBeGreaterThanOrEqual(2);
    await sandbox.kill();
  });
});
