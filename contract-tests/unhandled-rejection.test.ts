import { spawn } from "node:child_process";
import { once } from "node:events";
import { join } from "node:path";
import { describe, expect, it } from "vitest";

const repositoryRoot = join(import.meta.dirname, "..");
const fixtureConfig = join(import.meta.dirname, "fixtures", "unhandled-rejection", "vitest.config.ts");
const vitestEntry = join(repositoryRoot, "node_modules", "vitest", "vitest.mjs");

/** Runs vitest in a child process on the fixture config; resolves with its exit code and combined output. */
async function runVitestOnFixture(signal: AbortSignal): Promise<{ exitCode: number | null; output: string }> {
  const child = spawn(process.execPath, [vitestEntry, "run", "--config", fixtureConfig, "--reporter=default"], {
    cwd: repositoryRoot,
    env: { ...process.env, CI: "true", FORCE_COLOR: "0", NO_COLOR: "1" },
    stdio: ["ignore", "pipe", "pipe"],
    signal,
  });
  let output = "";
  child.stdout.setEncoding("utf8");
  child.stderr.setEncoding("utf8");
  child.stdout.on("data", (text: string) => (output += text));
  child.stderr.on("data", (text: string) => (output += text));
  const [exitCode] = (await once(child, "exit")) as [number | null];
  return { exitCode, output };
}

describe("an unhandled rejection anywhere in a run fails the run (adr/0034)", () => {
  it("vitest, with the contract run's settings, exits non-zero when a passing test leaves an unhandled rejection", async () => {
    const { exitCode, output } = await runVitestOnFixture(AbortSignal.timeout(90_000));
    // The fixture's only test passes: the failure can come from nothing but the rejection nobody handled.
    expect(output, output).toMatch(/1 passed/);
    expect(output, output).toMatch(/Unhandled Rejection/);
    expect(output, output).toContain("sbx-unhandled-rejection-fixture: nobody handles this");
    expect(exitCode, output).toBe(1);
  }, 120_000);
});
