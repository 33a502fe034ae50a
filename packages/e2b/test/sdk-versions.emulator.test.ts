import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";
import type { Sandbox, SandboxProviderV1 } from "@sbx/core";
import { type DriverAudit, createSandboxFromDriver } from "@sbx/core/adapter";
import { startE2BEmulator } from "@sbx/e2b-emulator";
import { describe, expect, it } from "vitest";
import { shareEmulator, testDriverAudit } from "@sbx/emulator-kit/testing";
import { createSandboxProvider } from "../src/index.js";
import { E2BDriver } from "../src/e2b-driver.js";

/**
 * The adapter's command and file paths against two e2b SDK versions through the emulator: 2.51.0 (what the adapter
 * ships with) and 2.45.0 (the emulator's `e2b-v245` alias), including the raw-byte output path, which relies on the
 * SDK's envd process client. Skips (loudly) when Docker or the emulator is unavailable.
 */
const shared = shareEmulator({ start: () => startE2BEmulator({}), backend: "e2b", label: "@sbx/e2b SDK-version tests" });

const emulatorRequire = createRequire(fileURLToPath(new URL("../../../tools/e2b-emulator/package.json", import.meta.url)));

const audit: DriverAudit = testDriverAudit();

async function exercise(sandbox: Sandbox) {
  const result = await sandbox.commands.run("printf 'ok\\377'; echo err 1>&2; exit 5");
  expect(result.exitCode).toBe(5);
  expect([...result.stdoutBytes]).toEqual([0x6f, 0x6b, 0xff]);
  expect(result.stderr).toBe("err\n");
  const handle = await sandbox.commands.start("cat", { stdin: true });
  await handle.writeStdin("piped");
  await handle.closeStdin();
  expect((await handle.wait()).stdout).toBe("piped");
  const background = await sandbox.commands.start("sleep 30 & sleep 30 & wait");
  await handle.kill();
  await background.kill();
  expect((await background.wait()).exitCode).toBe(137);
  expect((await sandbox.commands.run("ps -eo args | grep -c '^sleep 30$' || true")).stdout.trim()).toBe("0");
  await sandbox.files.write("dir/data.bin", new Uint8Array([0, 1, 2, 255]));
  expect([...(await sandbox.files.read("dir/data.bin", { format: "bytes" }))]).toEqual([0, 1, 2, 255]);
  expect((await sandbox.files.list("dir")).map((entry) => entry.name)).toEqual(["data.bin"]);
}

describe("e2b SDK versions through the emulator", () => {
  it("e2b 2.51.0 (the adapter's own SDK), through createSandbox", async (context) => {
    if (!shared.emulator) return context.skip(`E2B emulator unavailable: ${shared.unavailable}`);
    const { createSandbox } = await import("@sbx/core");
    await using sandbox = await createSandbox(createSandboxProvider(shared.emulator.connectionOptions));
    await exercise(sandbox);
  });

  it("e2b 2.45.0: the driver's command and file paths on the older SDK's Sandbox", async (context) => {
    if (!shared.emulator) return context.skip(`E2B emulator unavailable: ${shared.unavailable}`);
    const { Sandbox } = (await import(emulatorRequire.resolve("e2b-v245"))) as {
      Sandbox: { create(template: string, options: object): Promise<{ sandboxId: string; kill(): Promise<void> }> };
    };
    const raw = await Sandbox.create("base", { ...shared.emulator.connectionOptions, allowInternetAccess: false });
    const provider = createSandboxProvider(shared.emulator.connectionOptions) as SandboxProviderV1;
    const driver = new E2BDriver(raw as never, { audit, user: undefined, requestTimeoutMs: undefined });
    await using sandbox = createSandboxFromDriver(driver, {
      provider,
      target: "base",
      options: {
        network: { egress: "deny" },
        timeoutMs: 60_000,
        env: {},
        secrets: {},
        metadata: {},
        mounts: [],
        user: "default",
        allowFake: false,
        settings: {},
      },
    });
    await exercise(sandbox);
  });
});
