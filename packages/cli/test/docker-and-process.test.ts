import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { createSandbox } from "@sbx/core";
import { createSandboxProvider } from "@sbx/docker";
import { describe, expect, it } from "vitest";
import { normalise, sbx } from "./cli-harness.js";

const BIN = fileURLToPath(new URL("../bin/sbx.js", import.meta.url));
const IMAGE = process.env.SBX_DOCKER_IMAGE ?? "sbx-test/python:3.11";
const execFileAsync = promisify(execFile);

/** Runs the built `sbx` executable as a user would, returning its exit status and output. */
async function sbxProcess(
  argv: string[],
  env: Record<string, string | undefined> = {},
): Promise<{ exitCode: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await execFileAsync(process.execPath, [BIN, ...argv], { env: { ...process.env, ...env }, timeout: 60_000 });
    return { exitCode: 0, stdout, stderr };
  } catch (error) {
    const failure = error as { code: number; stdout: string; stderr: string };
    return { exitCode: failure.code, stdout: failure.stdout, stderr: failure.stderr };
  }
}

const required = (process.env.SBX_REQUIRE ?? "")
  .split(",")
  .map((name) => name.trim())
  .includes("docker");
const status = await createSandboxProvider({ image: IMAGE }).detect();
if (!status.usable) {
  const message = `Docker is not usable here: ${status.reason} ${status.remedy}`;
  if (required) throw new Error(`SBX_REQUIRE names docker, but ${message}`);
  console.warn(`\n[sbx] SKIPPING the sbx CLI's Docker tests: ${message}\n`);
}
const describeWithDocker = status.usable ? describe : describe.skip;

describe("the sbx executable", () => {
  it("sbx doctor exits non-zero and names remedies when nothing isolating is usable", async () => {
    const outcome = await sbxProcess(["doctor"], { DOCKER_HOST: "unix:///nonexistent/sbx-cli-test.sock", E2B_API_KEY: undefined, NO_COLOR: "1" });
    expect(outcome.exitCode).toBe(1);
    expect(outcome.stdout).toMatch(/^docker +no +yes +.*Remedy: /m);
    expect(outcome.stdout).toMatch(/^fake +yes +no \(not a security boundary\)/m);
    expect(outcome.stdout).toContain("No isolating backend is usable here");
  });

  it("sbx run exits with the command's own exit code as a process", async () => {
    const outcome = await sbxProcess(["run", "--quiet", "--target", "fake://", "--", "echo done; exit 7"]);
    expect(outcome).toEqual({ exitCode: 7, stdout: "done\n", stderr: "" });
  });

  it("sbx ls and sbx gc say the engine is unreachable, with a remedy", async () => {
    const outcome = await sbxProcess(["ls"], { DOCKER_HOST: "unix:///nonexistent/sbx-cli-test.sock", NO_COLOR: "1" });
    expect(outcome.exitCode).toBe(125);
    expect(outcome.stderr).toContain("error [SBX_BACKEND_UNAVAILABLE]: Cannot reach the Docker engine");
    expect(outcome.stderr).toContain("remedy: Start the Docker Engine (or set DOCKER_HOST)");
  });
});

describeWithDocker("sbx on Docker", () => {
  it("sbx run runs the command in a container and exits with its code", async () => {
    const outcome = await sbx(["run", "--target", `docker://${IMAGE}`, "--", "python3 -c 'import os; print(os.getuid()); raise SystemExit(5)'"]);
    expect(outcome.exitCode).toBe(5);
    expect(outcome.stdout).toBe("10001\n");
    expect(normalise(outcome.stderr)).toBe("sbx: sandbox <docker-id> on docker, network denied\nsbx: exit code 5\n");
  });

  it("sbx ls --json lists a live sandbox with its owner; sbx gc --dry-run does not count it as an orphan", async () => {
    await using sandbox = await createSandbox(createSandboxProvider({ image: IMAGE }), { metadata: { test: "sbx-cli-ls" } });
    const listed = await sbx(["ls", "--json"]);
    expect(listed.exitCode).toBe(0);
    const entry = JSON.parse(listed.stdout).sandboxes.find((candidate: { id: string }) => candidate.id === sandbox.id);
    expect(entry).toMatchObject({
      id: sandbox.id,
      image: IMAGE,
      state: "running",
      owner: { pid: process.pid },
      metadata: { test: "sbx-cli-ls" },
      orphanReason: null,
    });
    const table = await sbx(["ls"]);
    expect(table.stdout).toMatch(new RegExp(`^${sandbox.id.slice(0, 12)} +${IMAGE.replace(/[.]/g, "\\.")} +running +\\d+s +${process.pid}@`, "m"));
    const dryRun = await sbx(["gc", "--dry-run", "--json"]);
    expect(dryRun.exitCode).toBe(0);
    expect(JSON.parse(dryRun.stdout).containers.map((container: { id: string }) => container.id)).not.toContain(sandbox.id);
  });
});
