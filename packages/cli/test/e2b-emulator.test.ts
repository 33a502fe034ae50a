import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { registerProvider } from "@sbx/core";
import { createSandboxProvider } from "@sbx/e2b";
import { startE2BEmulator, type E2BEmulator } from "@sbx/e2b-emulator";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { normalise, sbx } from "./cli-harness.js";

/**
 * `sbx code` on a backend with rich results: E2B, through the wire-protocol emulator (a real container per sandbox).
 * The e2b:// scheme is pointed at the emulator with registerProvider, so nothing leaves this machine.
 */
const image = process.env.SBX_E2B_EMULATOR_IMAGE ?? "sbx-test/python:3.11";
const required = (process.env.SBX_REQUIRE ?? "")
  .split(",")
  .map((name) => name.trim())
  .includes("e2b");
let emulator: E2BEmulator | undefined;
let startFailure = "";

beforeAll(async () => {
  try {
    emulator = await startE2BEmulator({ image });
    registerProvider("e2b", (settings) => createSandboxProvider({ ...settings, ...emulator!.connectionOptions }));
  } catch (error) {
    startFailure = error instanceof Error ? error.message : String(error);
    if (required) throw new Error(`SBX_REQUIRE names e2b, but the E2B emulator did not start: ${startFailure}`, { cause: error });
    console.warn(`\n[sbx] SKIPPING the sbx CLI's E2B emulator test: ${startFailure}\n`);
  }
});

afterAll(async () => {
  await emulator?.stop();
});

describe("sbx code on E2B (emulator)", () => {
  it("prints stdout and the main result from the backend's rich-result channel", async (context) => {
    if (!emulator) return context.skip(`the E2B emulator did not start: ${startFailure}`);
    const directory = await mkdtemp(join(tmpdir(), "sbx-cli-e2b-"));
    const outcome = await sbx(["code", "--target", "e2b://", "-"], { stdin: "print('computing')\n6 * 7\n", cwd: directory });
    expect(outcome.exitCode).toBe(0);
    expect(outcome.stdout).toBe("computing\n42\n");
    expect(normalise(outcome.stderr)).toMatch(/^sbx: sandbox \S+ on e2b, network denied\n$/);
    const json = await sbx(["code", "--json", "--target", "e2b://", "-"], { stdin: "6 * 7\n", cwd: directory });
    expect(JSON.parse(json.stdout).results).toEqual([{ isMainResult: true, mimeTypes: ["text/plain"], text: "42", savedFiles: [] }]);
  });
});
