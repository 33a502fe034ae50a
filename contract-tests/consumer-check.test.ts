/**
 * The consumer check (scripts/consumer-check.mjs) as part of `npm test`: the packed packages install from their
 * tarballs into a fresh project outside the workspace, the README and docs examples type-check there (strict, no
 * skipLibCheck, nodenext and bundler), and publint and attw (ESM-only profile) pass on every package. The script's
 * whole output is printed, so CI logs show it.
 */
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const script = fileURLToPath(new URL("../scripts/consumer-check.mjs", import.meta.url));

describe("consumer check", () => {
  it("packs, installs with npm into a fresh project, type-checks the examples and passes publint and attw", async () => {
    const { status, output } = await new Promise<{ status: number | null; output: string }>((resolve) => {
      const child = spawn(process.execPath, [script], { stdio: ["ignore", "pipe", "pipe"] });
      let text = "";
      child.stdout.on("data", (chunk) => (text += chunk));
      child.stderr.on("data", (chunk) => (text += chunk));
      child.on("close", (code) => resolve({ status: code, output: text }));
    });
    process.stdout.write(`${output}\n`);
    expect(output).toContain("tsc (nodenext, strict, skipLibCheck false): ok");
    expect(output).toContain("tsc (bundler, strict, skipLibCheck false): ok");
    expect(output).toMatch(/consumer check passed in/);
    expect(status).toBe(0);
  }, 300_000);
});
