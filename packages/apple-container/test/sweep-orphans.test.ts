import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { promisify } from "node:util";
import { CONTAINER_STANDIN_BINARY, removeStandinNamespace } from "@sbx/container-standin";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sweepOrphans } from "../src/sweep-orphans.js";

/**
 * The orphan sweep through the stand-in CLI (on the Docker Engine): sbx containers a crashed host left behind (expired,
 * or whose creating process is dead) are deleted by label; a live owner's unexpired one and a container sbx did not
 * make are left alone, and so is a live owner's container listed as stopped (one being created). Skips with the reason when there is no engine.
 */
const execute = promisify(execFile);
const namespace = `sweep-${randomBytes(4).toString("hex")}`;
const environment = { ...process.env, CONTAINER_STANDIN_NAMESPACE: namespace };
const cli = { binary: CONTAINER_STANDIN_BINARY, environment };
const image = process.env.SBX_DOCKER_IMAGE ?? "sbx-test/python:3.11";
let engineProblem: string | undefined;

async function run(name: string, labels: Record<string, string>): Promise<void> {
  const flags = Object.entries(labels).flatMap(([key, value]) => ["--label", `${key}=${value}`]);
  await execute(CONTAINER_STANDIN_BINARY, ["run", "--detach", "--rm", "--name", name, "--network", "none", ...flags, image, "sleep", "300"], {
    env: environment,
  });
}

/** A container created and never started: listed as stopped, as one is while another process is creating it. */
async function createOnly(name: string, labels: Record<string, string>): Promise<void> {
  const flags = Object.entries(labels).flatMap(([key, value]) => ["--label", `${key}=${value}`]);
  await execute(CONTAINER_STANDIN_BINARY, ["create", "--rm", "--name", name, "--network", "none", ...flags, image, "sleep", "300"], {
    env: environment,
  });
}

async function ids(): Promise<string[]> {
  const { stdout } = await execute(CONTAINER_STANDIN_BINARY, ["ls", "--all", "--quiet"], { env: environment });
  return stdout.split("\n").filter(Boolean).sort();
}

beforeAll(async () => {
  engineProblem = await execute("docker", ["info"]).then(
    () => undefined,
    () => "no Docker Engine (docker info failed)",
  );
});

afterAll(async () => {
  if (!engineProblem) await removeStandinNamespace(namespace);
});

describe("sweepOrphans", () => {
  it("deletes expired and dead-owner sbx containers, keeps a live owner's and foreign ones", async (context) => {
    if (engineProblem) return context.skip(engineProblem);
    const future = String(Date.now() + 600_000);
    // A pid that is not running: far above any pid_max default.
    const deadPid = "4194303";
    await Promise.all([
      run("expired", { "dev.sbx.managed": "true", "dev.sbx.expires-at": String(Date.now() - 1_000), "dev.sbx.owner.pid": String(process.pid) }),
      run("dead-owner", { "dev.sbx.managed": "true", "dev.sbx.expires-at": future, "dev.sbx.owner.pid": deadPid }),
      run("live-owner", { "dev.sbx.managed": "true", "dev.sbx.expires-at": future, "dev.sbx.owner.pid": String(process.ppid) }),
      run("foreign", { "com.example.app": "web" }),
      // Being created by a live process: stopped until its start, never an orphan (a concurrent create lost its sandbox so).
      createOnly("live-owner-creating", { "dev.sbx.managed": "true", "dev.sbx.expires-at": future, "dev.sbx.owner.pid": String(process.ppid) }),
    ]);
    const swept = await sweepOrphans({ cli, timeoutMs: 120_000 });
    expect(swept.removed.sort()).toEqual(["dead-owner", "expired"]);
    expect(await ids()).toEqual(["foreign", "live-owner", "live-owner-creating"]);
  });
});
