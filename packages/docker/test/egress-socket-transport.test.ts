import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { Sandbox } from "@sbx/core";
import { afterAll, beforeAll, expect, it } from "vitest";
import { SANDBOX_SOCKET_DIRECTORY, SANDBOX_SOCKET_PATH, openEgressSocket, sweepEgressDirectories } from "../src/egress/egress-socket.js";
import { startSandboxEgress } from "../src/egress/sandbox-egress.js";
import { createTestSandbox, describeWithDocker, docker, TEST_IMAGE } from "./docker-test-environment.js";
import { fetchCommand, startLoopbackServer, type LoopbackServer } from "./egress-test-servers.js";

/** Test names, mapped by the proxy's resolver to the test's own loopback server. */
const HOSTS = { "allowed.test": "127.0.0.1", "other.test": "127.0.0.1" };

/** The host directory the engine mounted at the socket directory (read behind the adapter's back). */
async function socketDirectoryOf(sandboxId: string): Promise<string | undefined> {
  const inspect = await docker.getContainer(sandboxId).inspect();
  return inspect.Mounts.find((mount) => mount.Destination === SANDBOX_SOCKET_DIRECTORY)?.Source;
}

/** A Python one-liner that connects to the proxy socket directly and prints the status line, or the errno. */
function connectToSocket(request: string): string {
  return `python3 -c 'import socket
s = socket.socket(socket.AF_UNIX)
try:
    s.connect("${SANDBOX_SOCKET_PATH}"); s.sendall(b"${request}"); print(s.recv(300).decode().splitlines()[0])
except OSError as error:
    print("errno", error.errno)'`;
}

const runtimes = Object.keys(((await docker.info().catch(() => ({}))) as { Runtimes?: Record<string, unknown> }).Runtimes ?? {});
if (!runtimes.includes("runsc")) console.warn('\n[sbx] SKIPPING the gVisor egress fallback test: the engine has no "runsc" runtime.\n');
const itWithGvisor = runtimes.includes("runsc") ? it : it.skip;

describeWithDocker("Docker egress allowlist over the Unix-socket transport (adr/0027)", () => {
  let plain: LoopbackServer;
  let sandbox: Sandbox;
  const allowed = () => `allowed.test:${plain.port}`;
  const run = async (target: Sandbox, command: string) => (await target.commands.run(command, { timeoutMs: 30_000 })).stdout.trim();

  beforeAll(async () => {
    plain = await startLoopbackServer();
    sandbox = await createTestSandbox({ network: { egress: "deny", allow: [allowed()] } }, { egressHosts: HOSTS });
  }, 120_000);
  afterAll(async () => {
    await sandbox?.kill();
    await plain?.close();
  });

  it("a local engine gets the Unix-socket transport, named in the audit, and the allowlist holds on it", async () => {
    expect(sandbox.audit().policies.network.applied).toMatchObject({ proxy: { transport: "unix-socket" } });
    expect(sandbox.audit().policies.network.enforcement).toContain(`over a Unix socket (${SANDBOX_SOCKET_PATH}`);
    expect(await run(sandbox, fetchCommand(`http://${allowed()}/`))).toBe(`STATUS 200 sbx-ok ${allowed()}`);
    expect(await run(sandbox, fetchCommand(`http://other.test:${plain.port}/`))).toMatch(/^STATUS 403 sbx egress: other\.test:\d+ refused/);
  });

  it("the socket directory is not a caller's mount: the audit's mounts record stays empty", () => {
    expect(sandbox.audit().policies.mounts!.applied).toEqual([]);
  });

  it("the host directory is private (0700, this process's uid) and mounted read-only", async () => {
    const directory = await socketDirectoryOf(sandbox.id);
    expect(directory).toMatch(/\/sbx-egress-\d+-[A-Za-z0-9]+$/);
    const stats = statSync(directory!);
    expect(stats.mode & 0o777).toBe(0o700);
    expect(stats.uid).toBe(process.getuid!());
    const mount = (await docker.getContainer(sandbox.id).inspect()).Mounts.find((candidate) => candidate.Destination === SANDBOX_SOCKET_DIRECTORY);
    expect(mount?.RW).toBe(false);
  });

  it("the sandbox user (uid 10001, no capabilities) cannot reach the socket or list its directory: only the forwarder can", async () => {
    expect(await run(sandbox, connectToSocket(`GET http://${allowed()}/ HTTP/1.1\\r\\nHost: ${allowed()}\\r\\n\\r\\n`))).toBe("errno 13");
    expect(await run(sandbox, `ls ${SANDBOX_SOCKET_DIRECTORY} 2>&1; echo exit=$?`)).toMatch(/Permission denied\s+exit=2$/);
  });

  it("a root sandbox cannot replace the socket (read-only mount), and connecting to it directly meets the same allowlist", async () => {
    await using rootSandbox = await createTestSandbox({ user: "root", network: { egress: "deny", allow: [allowed()] } }, { egressHosts: HOSTS });
    expect(rootSandbox.audit().policies.network.applied).toMatchObject({ proxy: { transport: "unix-socket" } });
    const replace = await rootSandbox.commands.run(
      `rm -f ${SANDBOX_SOCKET_PATH}; touch ${SANDBOX_SOCKET_DIRECTORY}/other.sock; mv ${SANDBOX_SOCKET_PATH} /tmp/moved; ls ${SANDBOX_SOCKET_DIRECTORY}`,
      { timeoutMs: 30_000 },
    );
    expect(replace.stderr.match(/Read-only file system/g)?.length).toBe(3);
    expect(replace.stdout.trim()).toBe("proxy.sock");
    expect(
      await run(rootSandbox, connectToSocket(`GET http://other.test:${plain.port}/ HTTP/1.1\\r\\nHost: other.test:${plain.port}\\r\\n\\r\\n`)),
    ).toBe("HTTP/1.1 403 Forbidden");
    expect(await run(rootSandbox, connectToSocket(`GET http://${allowed()}/ HTTP/1.1\\r\\nHost: ${allowed()}\\r\\n\\r\\n`))).toBe("HTTP/1.1 200 OK");
  });

  it("kill() removes the host directory", async () => {
    const second = await createTestSandbox({ network: { egress: "deny", allow: [allowed()] } }, { egressHosts: HOSTS });
    const directory = await socketDirectoryOf(second.id);
    expect(existsSync(`${directory}/proxy.sock`)).toBe(true);
    await second.kill();
    expect(existsSync(directory!)).toBe(false);
  });

  it("a host that is SIGKILLed leaves its directory to the sweep, which removes it once the process is gone", async () => {
    // The child's temporary directory is this test's own, so no other process's sweep can race this one.
    const parent = mkdtempSync(join(tmpdir(), "sbx-egress-sweep-test-"));
    const child = spawn(process.execPath, [fileURLToPath(new URL("./fixtures/create-allowlisted-and-hang.mjs", import.meta.url))], {
      cwd: fileURLToPath(new URL("..", import.meta.url)),
      stdio: ["ignore", "pipe", "inherit"],
      env: { ...process.env, TMPDIR: parent },
    });
    let output = "";
    child.stdout.setEncoding("utf8");
    child.stdout.on("data", (text: string) => (output += text));
    while (!output.includes("\n")) {
      if (child.exitCode !== null) throw new Error(`the fixture exited early with ${child.exitCode}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const { id } = JSON.parse(output) as { id: string };
    const directory = await socketDirectoryOf(id);
    expect(directory).toMatch(new RegExp(`^${parent}/sbx-egress-${child.pid}-`));
    child.kill("SIGKILL");
    await new Promise((resolve) => child.once("exit", resolve));
    expect(existsSync(directory!)).toBe(true);
    // sweepOrphans() runs this sweep too (and every create with an allowlist does); called alone here so this test
    // never removes other processes' orphaned containers.
    expect(sweepEgressDirectories(parent)).toEqual([directory]);
    expect(existsSync(directory!)).toBe(false);
    rmSync(parent, { recursive: true, force: true });
  });

  it('forced to the exec stream (settings.egressTransport "exec"), the allowlist still holds and the audit says why', async () => {
    await using execSandbox = await createTestSandbox(
      { network: { egress: "deny", allow: [allowed()] } },
      { egressHosts: HOSTS, egressTransport: "exec" },
    );
    expect(execSandbox.audit().policies.network.applied).toMatchObject({
      proxy: { transport: "exec-stream", transportFallbackReason: 'settings.egressTransport is "exec"' },
    });
    expect(await socketDirectoryOf(execSandbox.id)).toBeUndefined();
    expect(await run(execSandbox, fetchCommand(`http://${allowed()}/`))).toBe(`STATUS 200 sbx-ok ${allowed()}`);
    expect(await run(execSandbox, fetchCommand(`http://other.test:${plain.port}/`))).toMatch(/^STATUS 403 sbx egress: other\.test:\d+ refused/);
  });

  itWithGvisor("under gVisor (no host Unix sockets) the probe fails, and the exec stream enforces the same allowlist", async () => {
    await using gvisor = await createTestSandbox({ network: { egress: "deny", allow: [allowed()] } }, { egressHosts: HOSTS, runtime: "runsc" });
    expect(gvisor.audit().policies.network.applied).toMatchObject({
      proxy: { transport: "exec-stream", transportFallbackReason: expect.stringMatching(/^the sandbox cannot connect to the socket \(.+\)$/) },
    });
    expect(await run(gvisor, fetchCommand(`http://${allowed()}/`))).toBe(`STATUS 200 sbx-ok ${allowed()}`);
    expect(await run(gvisor, fetchCommand(`http://other.test:${plain.port}/`))).toMatch(/^STATUS 403 sbx egress: other\.test:\d+ refused/);
  });

  it("a probe that does not reach this process falls back to the exec stream (never a wider path) and removes the directory", async () => {
    const socket = await openEgressSocket();
    // The mounted socket answers only its own token: a forwarder given another one fails the probe, as a runtime
    // without host Unix sockets (gVisor) or a VM between host and engine (Docker Desktop) would.
    const wrongToken = { ...socket, probeToken: "0".repeat(32) };
    const container = await docker.createContainer({
      Image: TEST_IMAGE,
      Entrypoint: ["sleep", "120"],
      Cmd: [],
      Labels: { "sbx.test": "1" },
      HostConfig: { NetworkMode: "none", AutoRemove: true, Mounts: [socket.mount] },
    });
    try {
      await container.start();
      const egress = await startSandboxEgress(container, {
        allow: [allowed()],
        ports: [80],
        hosts: HOSTS,
        networkMode: "none",
        sandboxId: container.id,
        notes: [],
        socket: wrongToken,
        socketUser: "0:0",
      });
      try {
        expect(egress.transport).toBe("exec-stream");
        expect(egress.record.applied).toMatchObject({
          proxy: { transport: "exec-stream", transportFallbackReason: "the socket did not answer the probe" },
        });
        expect(existsSync(socket.directory)).toBe(false);
        const exec = await container.exec({
          Cmd: ["sh", "-c", fetchCommand(`http://${allowed()}/`)],
          Env: Object.entries(egress.environment).map(([name, value]) => `${name}=${value}`),
          AttachStdout: true,
          AttachStderr: true,
          User: "10001:10001",
        });
        const stream = await exec.start({ hijack: true, stdin: false });
        const chunks: Buffer[] = [];
        stream.on("data", (chunk: Buffer) => chunks.push(chunk));
        await new Promise((resolve) => stream.once("end", resolve));
        expect(Buffer.concat(chunks).toString("latin1")).toContain(`STATUS 200 sbx-ok ${allowed()}`);
      } finally {
        egress.close();
      }
    } finally {
      socket.close();
      await container.remove({ force: true }).catch(() => {});
    }
  });
});
