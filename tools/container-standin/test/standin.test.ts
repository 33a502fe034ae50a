import { execFile, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CONTAINER_STANDIN_BINARY, removeStandinNamespace } from "../src/index.js";

/**
 * The stand-in against the behaviours of the real CLI it must reproduce (shared/reference/apple-container-cli.md §6),
 * on the local Docker Engine, in a namespace of its own. Skips with the reason when there is no engine.
 */
const namespace = `standin-test-${randomBytes(4).toString("hex")}`;
const image = process.env.SBX_DOCKER_IMAGE ?? "sbx-test/python:3.11";
let engineProblem: string | undefined;

interface Outcome {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

function container(args: string[], environment: Record<string, string> = {}): Promise<Outcome> {
  return new Promise((resolve) => {
    execFile(
      CONTAINER_STANDIN_BINARY,
      args,
      { env: { ...process.env, CONTAINER_STANDIN_NAMESPACE: namespace, ...environment } },
      (error, stdout, stderr) => {
        const code = error ? (typeof (error as { code?: unknown }).code === "number" ? (error as { code: number }).code : 1) : 0;
        resolve({ code, stdout, stderr });
      },
    );
  });
}

beforeAll(async () => {
  const info = await new Promise<boolean>((resolve) => execFile("docker", ["info"], (error) => resolve(!error)));
  if (!info) engineProblem = "no Docker Engine (docker info failed)";
});

afterAll(async () => {
  if (!engineProblem) await removeStandinNamespace(namespace);
});

describe("container stand-in: no engine needed", () => {
  it("prints --version and both system status generations, and the service-down text", async () => {
    expect((await container(["--version"])).stdout).toBe("container CLI version 1.2.2 (build: release, commit: 0190097)\n");
    const flat = await container(["system", "status", "--format", "json"], { CONTAINER_STANDIN_SERVICE: "not-running" });
    expect(flat.code).toBe(1);
    expect(JSON.parse(flat.stdout)).toMatchObject({ status: "not running", apiServerVersion: "" });
    const nested = await container(["system", "status", "--format", "json"], {
      CONTAINER_STANDIN_VERSION: "1.4.1",
      CONTAINER_STANDIN_SERVICE: "unregistered",
    });
    expect([nested.code, nested.stdout]).toEqual([1, '{"status":"unregistered"}\n']);
    const down = await container(["ls"], { CONTAINER_STANDIN_SERVICE: "not-running" });
    expect(down.code).toBe(1);
    expect(down.stderr).toContain("Ensure container system service has been started with `container system start`.");
  });

  it("refuses what the real CLI refuses, with its exit codes", async () => {
    expect((await container(["run", "-d", "--cpus", "1.5", image, "sleep", "1"])).code).toBe(64);
    expect((await container(["run", "-d", "--bogus", image])).code).toBe(64);
    const memory = await container(["run", "-d", "--memory", "100M", image, "sleep", "1"]);
    expect([memory.code, memory.stderr]).toEqual([1, 'Error: invalidArgument: "minimum memory amount allowed is 200 MiB (got 104857600 bytes)"\n']);
    expect((await container(["run", "-d", "-l", "a=b=c", image])).stderr).toContain("invalid label format");
    expect((await container(["run", "-d", "--network", "none", "--network", "default", image])).stderr).toContain(
      "no other networks may be created along with network none",
    );
    expect((await container(["run", "-d", "--name", "_bad", image])).stderr).toBe("Error: container ID _bad is not a valid container ID\n");
    expect((await container(["images"])).code).toBe(64);
  });
});

describe("container stand-in: on the engine", () => {
  it("runs, execs with exit codes and stdin, fails a missing executable as the CLI does, and inspects without an exit code", async (context) => {
    if (engineProblem) return context.skip(engineProblem);
    const id = `t-${randomBytes(4).toString("hex")}`;
    const started = await container(["run", "-d", "--name", id, "--network", "none", "--memory", "256M", "--cpus", "1", image, "sleep", "120"]);
    expect([started.code, started.stdout]).toEqual([0, `${id}\n`]);
    const again = await container(["run", "-d", "--name", id, "--network", "none", image, "sleep", "120"]);
    expect([again.code, again.stderr]).toEqual([1, `Error: container with id ${id} already exists\n`]);
    const listed = JSON.parse((await container(["ls", "--format", "json"])).stdout) as Array<{
      id: string;
      configuration: { resources: { cpus: number; memoryInBytes: number } };
    }>;
    expect(listed.find((entry) => entry.id === id)?.configuration.resources).toMatchObject({ cpus: 1, memoryInBytes: 256 * 1024 * 1024 });
    const ran = await container(["exec", id, "sh", "-c", "echo out; echo err >&2; exit 3"]);
    expect(ran).toEqual({ code: 3, stdout: "out\n", stderr: "err\n" });
    const missing = await container(["exec", id, "no-such-program"]);
    expect([missing.code, missing.stderr]).toEqual([1, 'Error: internalError: "failed to find target executable no-such-program"\n']);
    const piped = await new Promise<string>((resolve) => {
      const child = spawn(CONTAINER_STANDIN_BINARY, ["exec", "-i", id, "cat"], { env: { ...process.env, CONTAINER_STANDIN_NAMESPACE: namespace } });
      let text = "";
      child.stdout.on("data", (chunk: Buffer) => (text += chunk.toString()));
      child.on("close", () => resolve(text));
      child.stdin.end("to stdin");
    });
    expect(piped).toBe("to stdin");
    expect((await container(["exec", "-w", "/made/here", id, "pwd"])).stdout).toBe("/made/here\n");
    expect((await container(["delete", id])).stderr).toContain("is running and can not be deleted");
    expect((await container(["stop", "-t", "1", id])).stdout).toBe(`${id}\n`);
    expect((await container(["stop", id])).code).toBe(0);
    const inspected = JSON.parse((await container(["inspect", id])).stdout) as Array<{ status: Record<string, unknown> }>;
    expect(inspected[0]!.status).toEqual({ networks: [], state: "stopped" });
    expect((await container(["exec", id, "true"])).stderr).toBe(`Error: invalidState: "container ${id} is not running"\n`);
    expect((await container(["delete", id])).stdout).toBe(`${id}\n`);
    expect((await container(["inspect", id])).stderr).toBe(`Error: notFound: "container not found: ${id}"\n`);
  });

  it("does not forward signals to an exec'd process (the third SIGTERM exits 1, the process keeps running); silent cp copies nothing", async (context) => {
    if (engineProblem) return context.skip(engineProblem);
    const id = `s-${randomBytes(4).toString("hex")}`;
    await container(["run", "-d", "--rm", "--name", id, "--network", "none", image, "sleep", "120"]);
    const child = spawn(CONTAINER_STANDIN_BINARY, ["exec", id, "sh", "-c", "echo started; sleep 60"], {
      env: { ...process.env, CONTAINER_STANDIN_NAMESPACE: namespace },
    });
    let stderr = "";
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    await new Promise<void>((resolve) => child.stdout.once("data", () => resolve()));
    const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
    for (let count = 0; count < 3; count++) {
      child.kill("SIGTERM");
      await new Promise((resolve) => setTimeout(resolve, 300));
    }
    expect(await exited).toBe(1);
    expect(stderr).toContain('failed to send signal: ["error": invalidArgument: "missing signal in xpc message", "signal": 15]');
    expect(
      (await container(["exec", id, "sh", "-c", "cat /proc/[0-9]*/cmdline | tr '\\0' ' ' | grep -c 'slee[p] 60' || true"])).stdout.trim(),
    ).not.toBe("0");
    const folder = await mkdtemp(join(tmpdir(), "standin-cp-"));
    try {
      await writeFile(join(folder, "file.txt"), "copied");
      const silent = await container(["cp", join(folder, "file.txt"), `${id}:/tmp/file.txt`], { CONTAINER_STANDIN_CP: "silent" });
      expect(silent.code).toBe(0);
      expect((await container(["exec", id, "cat", "/tmp/file.txt"])).code).not.toBe(0);
      expect((await container(["cp", join(folder, "file.txt"), `${id}:/tmp/file.txt`])).code).toBe(0);
      expect((await container(["exec", id, "cat", "/tmp/file.txt"])).stdout).toBe("copied");
      expect(await readFile(join(folder, "file.txt"), "utf8")).toBe("copied");
    } finally {
      await rm(folder, { recursive: true, force: true });
      await container(["delete", "--force", id]);
    }
  });
});
