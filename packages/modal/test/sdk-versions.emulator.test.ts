import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";
import { createSandbox, type Sandbox, type SandboxProviderV1 } from "@sbx/core";
import { type DriverAudit, createSandboxFromDriver } from "@sbx/core/adapter";
import { startModalEmulator } from "@sbx/modal-emulator";
import { describe, expect, it } from "vitest";
import { shareEmulator, testDriverAudit } from "@sbx/emulator-kit/testing";
import { createSandboxProvider } from "../src/index.js";
import { ModalDriver, MODAL_WORKSPACE } from "../src/modal-driver.js";

/**
 * The adapter's command and file paths on two `modal` SDK versions through the emulator: 0.11.1 (what the adapter
 * ships with, V2 sandboxes) and 0.10.1 (the emulator's `modal-v010` alias, whose default is the V1 sandbox path),
 * including the tree kill. Skips (loudly) when Docker or the emulator is unavailable, fails with SBX_REQUIRE=modal.
 */
const shared = shareEmulator({ start: () => startModalEmulator({}), backend: "modal", label: "@sbx/modal SDK-version tests" });

const emulatorRequire = createRequire(fileURLToPath(new URL("../../../tools/modal-emulator/package.json", import.meta.url)));

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
  const background = await sandbox.commands.start("(setsid sleep 30 &) ; sleep 30 & sleep 30 & wait");
  await new Promise((resolve) => setTimeout(resolve, 500));
  await background.kill();
  expect((await background.wait()).exitCode).toBe(137);
  expect((await sandbox.commands.run("ps -eo args | grep -c '^sleep 30$' || true")).stdout.trim()).toBe("0");
  await sandbox.files.write("dir/data.bin", new Uint8Array([0, 1, 2, 255]));
  expect([...(await sandbox.files.read("dir/data.bin", { format: "bytes" }))]).toEqual([0, 1, 2, 255]);
  await sandbox.files.rename("dir/data.bin", "dir/renamed.bin");
  expect((await sandbox.files.list("dir")).map((entry) => entry.name)).toEqual(["renamed.bin"]);
}

function settings() {
  return {
    tokenId: shared.emulator!.tokenId,
    tokenSecret: shared.emulator!.tokenSecret,
    serverUrl: shared.emulator!.serverUrl,
    logLevel: "error" as const,
  };
}

describe("modal SDK versions through the emulator", () => {
  it("modal 0.11.1 (the adapter's own SDK), through createSandbox", async (context) => {
    if (!shared.emulator) return context.skip(`Modal emulator unavailable: ${shared.unavailable}`);
    await using sandbox = await createSandbox(createSandboxProvider(settings()));
    expect(sandbox.id).toMatch(/^sb-emu-/);
    await exercise(sandbox);
  });

  it("modal 0.10.1: the driver's command, kill and file paths on the older SDK's Sandbox (V1 path)", async (context) => {
    if (!shared.emulator) return context.skip(`Modal emulator unavailable: ${shared.unavailable}`);
    const sdk = (await import(emulatorRequire.resolve("modal-v010"))) as typeof import("modal");
    const previous = process.env.MODAL_SERVER_URL;
    process.env.MODAL_SERVER_URL = shared.emulator.serverUrl;
    const client = new sdk.ModalClient({ tokenId: shared.emulator.tokenId, tokenSecret: shared.emulator.tokenSecret, logLevel: "error" });
    if (previous === undefined) delete process.env.MODAL_SERVER_URL;
    else process.env.MODAL_SERVER_URL = previous;
    const app = await client.apps.fromName("sbx-sdk-010", { createIfMissing: true });
    const raw = await client.sandboxes.create(app, client.images.fromRegistry("python:3.12-slim"), { blockNetwork: true, workdir: MODAL_WORKSPACE });
    expect(raw.sandboxId).toMatch(/^sb-[0-9A-Za-z]{22}$/);
    const provider = createSandboxProvider(settings()) as SandboxProviderV1;
    const driver = new ModalDriver(raw as never, { audit });
    await using sandbox = createSandboxFromDriver(driver, {
      provider,
      target: "",
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
