import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";
import { createSandbox, isSbxError, type Sandbox, type SandboxProviderV1 } from "@sbx/core";
import { type DriverAudit, createSandboxFromDriver } from "@sbx/core/adapter";
import { startE2BEmulator } from "@sbx/e2b-emulator";
import { describe, expect, it } from "vitest";
import { shareEmulator, testDriverAudit } from "@sbx/emulator-kit/testing";
import { createSandboxProvider } from "../src/index.js";
import { E2BDriver } from "../src/e2b-driver.js";

/**
 * The "sandbox lost" rule on E2B: a sandbox that is killed out of band, or reaches its end of life, while a call
 * is in flight (or before it starts) fails that call with `SandboxNotFoundError`, never an exit code, a made-up
 * result or a generic ProviderError. Through the emulator, which now ends a sandbox like E2B does (every
 * in-flight connection dropped, `/health` 502), with the SDK the adapter ships (2.51.0) and with 2.45.0.
 */
const shared = shareEmulator({ start: () => startE2BEmulator({}), backend: "e2b", label: "@sbx/e2b lost-sandbox tests" });

const emulatorRequire = createRequire(fileURLToPath(new URL("../../../tools/e2b-emulator/package.json", import.meta.url)));

const audit: DriverAudit = testDriverAudit();

/** Kills the sandbox behind sbx's back, as another process or the E2B dashboard would. */
async function killOutOfBand(sandboxId: string): Promise<void> {
  const response = await fetch(`${shared.emulator!.url}/sandboxes/${sandboxId}`, {
    method: "DELETE",
    headers: { "X-API-KEY": shared.emulator!.apiKey },
  });
  expect(response.status).toBe(204);
}

async function waitFor(condition: () => boolean): Promise<void> {
  for (let attempt = 0; attempt < 200 && !condition(); attempt++) await new Promise((resolve) => setTimeout(resolve, 50));
  expect(condition()).toBe(true);
}

function expectLost(outcome: unknown, sandboxId: string): void {
  expect(isSbxError(outcome, "SBX_SANDBOX_NOT_FOUND")).toBe(true);
  expect(outcome).toMatchObject({ name: "SandboxNotFoundError", backend: "e2b", sandboxId, retryable: false });
  expect((outcome as Error).message).toMatch(/is gone|not found|sandbox/i);
}

type SandboxMaker = (options?: { timeoutMs?: number }) => Promise<Sandbox>;

const sdkVersions: Array<[string, SandboxMaker]> = [
  [
    "e2b 2.51.0 (the adapter's own SDK)",
    (options) => createSandbox(createSandboxProvider(shared.emulator!.connectionOptions), { timeoutMs: options?.timeoutMs ?? 120_000 }),
  ],
  [
    "e2b 2.45.0",
    async (options) => {
      const { Sandbox } = (await import(emulatorRequire.resolve("e2b-v245"))) as {
        Sandbox: { create(template: string, options: object): Promise<{ sandboxId: string }> };
      };
      const raw = await Sandbox.create("base", {
        ...shared.emulator!.connectionOptions,
        allowInternetAccess: false,
        timeoutMs: options?.timeoutMs ?? 120_000,
      });
      const provider = createSandboxProvider(shared.emulator!.connectionOptions) as SandboxProviderV1;
      const driver = new E2BDriver(raw as never, { audit, user: undefined, requestTimeoutMs: undefined });
      return createSandboxFromDriver(driver, {
        provider,
        target: "base",
        options: {
          network: { egress: "deny" },
          timeoutMs: options?.timeoutMs ?? 120_000,
          env: {},
          secrets: {},
          metadata: {},
          mounts: [],
          user: "default",
          allowFake: false,
          settings: {},
        },
      });
    },
  ],
];

describe.each(sdkVersions)("a lost E2B sandbox (%s)", (_label, makeSandbox) => {
  it("killed while a command runs: the command fails with SandboxNotFoundError, not exit 137", async (context) => {
    if (!shared.emulator) return context.skip(`E2B emulator unavailable: ${shared.unavailable}`);
    const sandbox = await makeSandbox();
    const stdout: string[] = [];
    const running = sandbox.commands.run("echo started; sleep 60", { onStdout: (text) => void stdout.push(text) }).catch((error: unknown) => error);
    await waitFor(() => stdout.join("").includes("started"));
    await killOutOfBand(sandbox.id);
    expectLost(await running, sandbox.id);
    await sandbox.kill();
  });

  it("killed under a background command: wait() fails with SandboxNotFoundError", async (context) => {
    if (!shared.emulator) return context.skip(`E2B emulator unavailable: ${shared.unavailable}`);
    const sandbox = await makeSandbox();
    const handle = await sandbox.commands.start("sleep 60");
    const waited = handle.wait().catch((error: unknown) => error);
    await killOutOfBand(sandbox.id);
    expectLost(await waited, sandbox.id);
    await sandbox.kill();
  });

  it("reaching its end of life during a command: SandboxNotFoundError", async (context) => {
    if (!shared.emulator) return context.skip(`E2B emulator unavailable: ${shared.unavailable}`);
    const sandbox = await makeSandbox({ timeoutMs: 3_000 });
    expectLost(await sandbox.commands.run("sleep 60").catch((error: unknown) => error), sandbox.id);
    await sandbox.kill();
  });

  it("killed while a file is streamed out, or written: the stream and the write fail with SandboxNotFoundError", async (context) => {
    if (!shared.emulator) return context.skip(`E2B emulator unavailable: ${shared.unavailable}`);
    const sandbox = await makeSandbox();
    await sandbox.commands.run("head -c 67108864 /dev/zero > big.bin");
    const stream = await sandbox.files.read("big.bin", { format: "stream" });
    const reader = stream.getReader();
    const first = await reader.read();
    expect(first.done).toBe(false);
    let upload!: ReadableStreamDefaultController<Uint8Array>;
    const writing = sandbox.files
      .write("upload.bin", new ReadableStream<Uint8Array>({ start: (controller) => void (upload = controller) }))
      .catch((error: unknown) => error);
    upload.enqueue(new Uint8Array(65_536));
    await killOutOfBand(sandbox.id);
    let failure: unknown;
    try {
      for (;;) if ((await reader.read()).done) break;
    } catch (error) {
      failure = error;
    }
    expectLost(failure, sandbox.id);
    try {
      upload.enqueue(new Uint8Array(65_536));
    } catch {
      // The failed upload already cancelled its body.
    }
    expectLost(await writing, sandbox.id);
    await sandbox.kill();
  });

  it("already gone: commands and every file operation fail with SandboxNotFoundError; kill() of the sandbox still succeeds", async (context) => {
    if (!shared.emulator) return context.skip(`E2B emulator unavailable: ${shared.unavailable}`);
    const sandbox = await makeSandbox();
    await sandbox.files.write("kept.txt", "x");
    await killOutOfBand(sandbox.id);
    expectLost(await sandbox.commands.run("true").catch((error: unknown) => error), sandbox.id);
    expectLost(await sandbox.files.read("kept.txt").catch((error: unknown) => error), sandbox.id);
    expectLost(await sandbox.files.write("new.txt", "y").catch((error: unknown) => error), sandbox.id);
    expectLost(await sandbox.files.list(".").catch((error: unknown) => error), sandbox.id);
    expectLost(await sandbox.files.remove("kept.txt").catch((error: unknown) => error), sandbox.id);
    expectLost(await sandbox.files.mkdir("dir").catch((error: unknown) => error), sandbox.id);
    await sandbox.kill();
  });
});

/** The driver alone (what core wraps): a spawned process's exit and kill() on a sandbox removed under it. */
const driverMakers: Array<[string, () => Promise<E2BDriver>]> = [
  [
    "e2b 2.51.0",
    async () => {
      const { Sandbox } = await import("@e2b/code-interpreter");
      return new E2BDriver(await Sandbox.create({ ...shared.emulator!.connectionOptions, allowInternetAccess: false }), {
        audit,
        user: undefined,
        requestTimeoutMs: undefined,
      });
    },
  ],
  [
    "e2b 2.45.0",
    async () => {
      const { Sandbox } = (await import(emulatorRequire.resolve("e2b-v245"))) as {
        Sandbox: { create(template: string, options: object): Promise<unknown> };
      };
      return new E2BDriver((await Sandbox.create("base", { ...shared.emulator!.connectionOptions, allowInternetAccess: false })) as never, {
        audit,
        user: undefined,
        requestTimeoutMs: undefined,
      });
    },
  ],
];

/** A core sandbox over `driver`, so every call goes through core's call channel (ADR 0037). */
function overCore(driver: E2BDriver): Sandbox {
  return createSandboxFromDriver(driver, {
    provider: createSandboxProvider(shared.emulator!.connectionOptions) as SandboxProviderV1,
    target: "base",
    options: {
      network: { egress: "deny" },
      timeoutMs: 120_000,
      env: {},
      secrets: {},
      metadata: {},
      mounts: [],
      user: "default",
      allowFake: false,
      settings: {},
    },
  });
}

describe.each(driverMakers)("the E2B driver's process handle on a lost sandbox (%s)", (_label, makeDriver) => {
  it("probe() answers running, then gone; wait() and kill() reject with SandboxNotFoundError: a vanished sandbox is not a verified kill", async (context) => {
    if (!shared.emulator) return context.skip(`E2B emulator unavailable: ${shared.unavailable}`);
    const driver = await makeDriver();
    const sandbox = overCore(driver);
    expect(await driver.probe()).toBe("running");
    const stdout: string[] = [];
    const handle = await sandbox.commands.start("echo started; sleep 60", { onStdout: (text) => void stdout.push(text) });
    const waited = handle.wait().catch((error: unknown) => error);
    await waitFor(() => stdout.join("").includes("started"));
    await killOutOfBand(driver.id);
    expect(await driver.probe()).toBe("gone");
    expectLost(await waited, driver.id);
    expectLost(await handle.kill().catch((error: unknown) => error), driver.id);
    await sandbox.kill();
  });
});

describe("a lost E2B sandbox during runCode (code interpreter 2.8.0)", () => {
  it("killed while code runs: runCode fails with SandboxNotFoundError, not a made-up kernel error", async (context) => {
    if (!shared.emulator) return context.skip(`E2B emulator unavailable: ${shared.unavailable}`);
    await using sandbox = await createSandbox(createSandboxProvider(shared.emulator.connectionOptions));
    const stdout: string[] = [];
    const running = sandbox
      .runCode("import time\nprint('started', flush=True)\ntime.sleep(300)", { onStdout: (text) => void stdout.push(text) })
      .catch((error: unknown) => error);
    await waitFor(() => stdout.join("").includes("started"));
    await killOutOfBand(sandbox.id);
    expectLost(await running, sandbox.id);
    expectLost(await sandbox.runCode("1 + 1").catch((error: unknown) => error), sandbox.id);
  });

  it("a string result comes back without quotes, as the real code interpreter sends it", async (context) => {
    if (!shared.emulator) return context.skip(`E2B emulator unavailable: ${shared.unavailable}`);
    await using sandbox = await createSandbox(createSandboxProvider(shared.emulator.connectionOptions));
    const execution = await sandbox.runCode("'x' * 3");
    expect(execution.results).toEqual([{ isMainResult: true, data: { "text/plain": "xxx" } }]);
  });
});
