import { connect, type Socket } from "node:net";
import type { ExposedPort, Sandbox } from "@sbx/core";
import { expect, type TestContext } from "vitest";
import {
  delay,
  describeGroup,
  expectCapabilityRefused,
  type ContractHarness,
  type SandboxContractOptions,
  type SandboxProviderFactoryForContract,
} from "../harness.js";
import { ENDED_WITHOUT_CALL_BOUND_MS } from "./lost-sandbox.js";
import { defaultProbeCommand } from "./network.js";

/** The port the servers inside listen on. */
const INSIDE_PORT = 8000;

/** How long a test waits for a server inside to listen, or for a listener to close (generous: the machine may be loaded). */
const WAIT_MS = 30_000;

/** Bytes a flooding client tries to push through a port whose server never reads: 256 MiB. */
const FLOOD_BYTES = 256 * 1024 * 1024;

/**
 * Most bytes the flooding client may get accepted before it is held: the kernels' socket buffers on both sides of the
 * host listener and inside the sandbox (a few MiB each with autotuning), plus the host's and the agent's windows. If
 * backpressure failed, the host would take all 256 MiB into its memory.
 */
const FLOOD_ACCEPTED_BOUND_BYTES = 64 * 1024 * 1024;

/** Most bytes the host may hold for one connection (`ExposedPort.stats().bufferedBytes`): the 512 KiB window plus one 64 KiB read. */
const HOST_BUFFER_BOUND_BYTES = 512 * 1024 + 64 * 1024;

/** Starts `program` (Python source) inside as a background command and waits until 127.0.0.1:`port` accepts connections. */
async function startServerInside(sandbox: Sandbox, program: string, port = INSIDE_PORT): Promise<void> {
  await sandbox.files.write(`server-${port}.py`, program.replace(`("127.0.0.1", ${INSIDE_PORT})`, `("127.0.0.1", ${port})`));
  await sandbox.commands.start(`exec python3 server-${port}.py`);
  const deadline = Date.now() + WAIT_MS;
  for (;;) {
    const probe = await sandbox.commands.run(`python3 -c "import socket; socket.create_connection(('127.0.0.1', ${port}), 2).close()"`);
    if (probe.exitCode === 0) return;
    if (Date.now() > deadline) throw new Error(`the server inside did not listen on ${port} within ${WAIT_MS} ms: ${probe.stderr}`);
    await delay(200);
  }
}

/** An HTTP server inside serving the workspace (`python3 -m http.server`). */
const HTTP_SERVER = `import http.server, functools
handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=".")
http.server.ThreadingHTTPServer(("127.0.0.1", ${INSIDE_PORT}), handler).serve_forever()
`;

/** A server inside that counts the connections it accepted (in accepted.txt) and answers each with one HTTP response. */
const COUNTING_SERVER = `import socket
server = socket.socket()
server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
server.bind(("127.0.0.1", ${INSIDE_PORT}))
server.listen(16)
count = 0
while True:
    connection, _ = server.accept()
    count += 1
    with open("accepted.txt", "w") as handle:
        handle.write(str(count))
    data = b""
    while b"\\r\\n\\r\\n" not in data:
        chunk = connection.recv(65536)
        if not chunk:
            break
        data += chunk
    with open("request-%d.txt" % count, "wb") as handle:
        handle.write(data)
    connection.sendall(b"HTTP/1.1 200 OK\\r\\ncontent-length: 6\\r\\nconnection: close\\r\\n\\r\\ninside")
    connection.close()
`;

/** A server inside that accepts connections and never reads from them. */
const NON_READING_SERVER = `import socket, time
server = socket.socket()
server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
server.bind(("127.0.0.1", ${INSIDE_PORT}))
server.listen(16)
held = []
while True:
    connection, _ = server.accept()
    held.append(connection)
`;

/** A server inside that sends without end to every connection, whatever the client reads. */
const FLOODING_SERVER = `import socket, threading
server = socket.socket()
server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
server.bind(("127.0.0.1", ${INSIDE_PORT}))
server.listen(16)
def flood(connection):
    block = b"x" * 65536
    try:
        while True:
            connection.sendall(block)
    except OSError:
        pass
while True:
    connection, _ = server.accept()
    threading.Thread(target=flood, args=(connection,), daemon=True).start()
`;

/** A server inside that sends hostile bytes (random, then a reset) on every connection. */
const HOSTILE_SERVER = `import os, socket, struct
server = socket.socket()
server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
server.bind(("127.0.0.1", ${INSIDE_PORT}))
server.listen(16)
while True:
    connection, _ = server.accept()
    try:
        connection.sendall(os.urandom(1024 * 1024))
    except OSError:
        pass
    connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    connection.close()
`;

/** Sandbox code that SIGKILLs every process running the sbx agent's source (`python3 -I -u -c …`): the agent and its zygote. */
const KILL_THE_AGENT = `import os, signal
for pid in os.listdir("/proc"):
    if not pid.isdigit() or int(pid) == os.getpid():
        continue
    try:
        argv = open("/proc/%s/cmdline" % pid, "rb").read().split(b"\\0")
    except OSError:
        continue
    if argv[:4] == [b"python3", b"-I", b"-u", b"-c"]:
        os.kill(int(pid), signal.SIGKILL)
        print("killed", pid)
`;

/** Opens a TCP connection to `url` (http://host:port); rejects with the socket's error (ECONNREFUSED once closed). */
function open(url: string): Promise<Socket> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect({ host: hostname, port: Number(port) });
    socket.once("connect", () => {
      socket.off("error", reject);
      resolve(socket);
    });
    socket.once("error", reject);
  });
}

/** Sends `request` on a new connection and returns everything the server sent until it closed (bounded by WAIT_MS). */
async function exchange(url: string, request: string): Promise<{ text: string; error: string | undefined }> {
  const socket = await open(url);
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let error: string | undefined;
    const timer = setTimeout(() => socket.destroy(new Error("no end within the wait")), WAIT_MS);
    socket.on("data", (chunk: Buffer) => chunks.push(chunk));
    socket.on("error", (failure: NodeJS.ErrnoException) => (error = failure.code ?? failure.message));
    socket.on("close", () => {
      clearTimeout(timer);
      resolve({ text: Buffer.concat(chunks).toString("latin1"), error });
    });
    socket.write(request);
  });
}

/** A GET request for `path` with the port's token header (or none / another token). */
function get(path: string, token: string | null): string {
  return `GET ${path} HTTP/1.1\r\nhost: sandbox\r\n${token === null ? "" : `x-sbx-port-token: ${token}\r\n`}connection: close\r\n\r\n`;
}

/** Resolves once a connection to `url` is refused (the listener closed); fails after WAIT_MS with what happened instead. */
async function expectRefusedSoon(url: string, what: string): Promise<void> {
  const deadline = Date.now() + WAIT_MS;
  for (;;) {
    const outcome = await open(url).then(
      (socket) => {
        socket.destroy();
        return "connected";
      },
      (error: NodeJS.ErrnoException) => error.code ?? error.message,
    );
    if (outcome === "ECONNREFUSED") return;
    if (Date.now() > deadline) expect.fail(`${what}: a connection to ${url} was still ${outcome} ${WAIT_MS} ms later`);
    await delay(200);
  }
}

/** Registers the exposed-port tests (`PORTS`, ADR 0053), or their refusal when it is off. */
export function registerPortsTests(harness: ContractHarness): void {
  const { contractTest, capabilities, options } = harness;

  if (!capabilities.PORTS) {
    contractTest("ports.refused", "ports.expose() raises SBX_CAPABILITY_NOT_SUPPORTED when PORTS is off", async () => {
      await using sandbox = await harness.createSandbox();
      await expectCapabilityRefused(harness, () => sandbox.ports.expose(INSIDE_PORT), "PORTS");
    });
    return;
  }

  contractTest(
    "ports.reaches-server",
    "a python http.server started inside answers through the exposed URL (127.0.0.1 only, with the token), while the same sandbox still cannot reach a server the test runs outside",
    async (context: TestContext) => {
      await using sandbox = await harness.createSandbox();
      await sandbox.files.write("hello.txt", "hello from inside the sandbox\n");
      await startServerInside(sandbox, HTTP_SERVER);
      await using exposed = await sandbox.ports.expose(INSIDE_PORT);
      expect(exposed.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      expect(exposed.token).toMatch(/^[A-Za-z0-9_-]{43}$/);
      const answer = await exchange(exposed.url, get("/hello.txt", exposed.token));
      expect(answer.text).toMatch(/^HTTP\/1\.[01] 200 /);
      expect(answer.text.endsWith("hello from inside the sandbox\n")).toBe(true);
      // A second connection, through fetch this time (keep-alive, a real HTTP client).
      const response = await fetch(`${exposed.url}/hello.txt`, { headers: { "x-sbx-port-token": exposed.token! } });
      expect(response.status).toBe(200);
      expect(await response.text()).toBe("hello from inside the sandbox\n");
      expect(sandbox.audit().policies.network.applied).toMatchObject({ egress: "deny" });
      const fixture = options.network;
      if (!fixture) context.skip("no network fixture: the egress half of this test needs options.network");
      const started = await fixture!.startServers(1);
      try {
        const url = started.servers[0]!.url;
        const probe = await sandbox.commands.run((fixture!.probeCommand ?? defaultProbeCommand)(url), { timeoutMs: 30_000 });
        expect(probe.exitCode === 0 && probe.stdout.trim() === "200", `GET ${url} from inside answered 200 with a port exposed`).toBe(false);
      } finally {
        await started.close();
      }
    },
  );

  contractTest(
    "ports.token-checked-on-host",
    "a missing or wrong token is refused with 403 on the host, and the server inside never sees the connection; the right one reaches it, without the token header",
    async () => {
      await using sandbox = await harness.createSandbox();
      await startServerInside(sandbox, COUNTING_SERVER);
      // startServerInside's own probe connected once.
      const before = Number((await sandbox.files.read("accepted.txt")).trim());
      await using exposed = await sandbox.ports.expose(INSIDE_PORT);
      const missing = await exchange(exposed.url, get("/", null));
      const wrong = await exchange(exposed.url, get("/", "A".repeat(43)));
      const notHttp = await exchange(exposed.url, "SSH-2.0-client\r\n\r\n");
      for (const refused of [missing, wrong, notHttp]) expect(refused.text).toMatch(/^HTTP\/1\.1 403 Forbidden\r\n/);
      expect(exposed.stats().refused).toBe(3);
      expect(Number((await sandbox.files.read("accepted.txt")).trim()), "connections the server inside accepted after three refused ones").toBe(
        before,
      );
      const allowed = await exchange(exposed.url, get("/", exposed.token));
      expect(allowed.text.endsWith("inside")).toBe(true);
      const count = Number((await sandbox.files.read("accepted.txt")).trim());
      expect(count).toBe(before + 1);
      const seen = await sandbox.files.read(`request-${count}.txt`);
      expect(seen).toMatch(/^GET \/ HTTP\/1\.1\r\n/);
      expect(seen.toLowerCase()).not.toContain("x-sbx-port-token");
      expect(seen).not.toContain(exposed.token!);
    },
  );

  contractTest(
    "ports.backpressure",
    "a client flooding a port whose server never reads is held (bytes accepted bounded, host buffer bounded); a server flooding a client that never reads is held too",
    async () => {
      await using sandbox = await harness.createSandbox();
      await startServerInside(sandbox, NON_READING_SERVER);
      await using exposed = await sandbox.ports.expose(INSIDE_PORT, { token: false });
      const socket = await open(exposed.url);
      const block = Buffer.alloc(64 * 1024, 0x61);
      let accepted = 0;
      let held = false;
      let maxBuffered = 0;
      while (accepted < FLOOD_BYTES) {
        maxBuffered = Math.max(maxBuffered, exposed.stats().bufferedBytes);
        if (socket.write(block)) {
          accepted += block.byteLength;
          continue;
        }
        // Not taken at once: the kernel's buffer is full. Held means no drain within 3 s.
        const drained = await Promise.race([
          new Promise<boolean>((resolve) => socket.once("drain", () => resolve(true))),
          delay(3_000).then(() => false),
        ]);
        if (!drained) {
          held = true;
          break;
        }
        accepted += block.byteLength;
      }
      maxBuffered = Math.max(maxBuffered, exposed.stats().bufferedBytes);
      socket.destroy();
      expect(held, `the client pushed ${accepted} bytes without being held`).toBe(true);
      expect(accepted).toBeLessThan(FLOOD_ACCEPTED_BOUND_BYTES);
      expect(maxBuffered).toBeLessThanOrEqual(HOST_BUFFER_BOUND_BYTES);

      await using flooding = await harness.createSandbox();
      await startServerInside(flooding, FLOODING_SERVER);
      await using download = await flooding.ports.expose(INSIDE_PORT, { token: false });
      const reader = await open(download.url);
      reader.pause();
      let peak = 0;
      for (let sample = 0; sample < 20; sample += 1) {
        await delay(250);
        peak = Math.max(peak, download.stats().bufferedBytes);
      }
      expect(peak, "bytes the host held for a client that never reads").toBeLessThanOrEqual(HOST_BUFFER_BOUND_BYTES);
      expect(peak, "the server's bytes reached the host at all").toBeGreaterThan(0);
      let received = 0;
      reader.on("data", (chunk: Buffer) => (received += chunk.byteLength));
      reader.resume();
      const deadline = Date.now() + WAIT_MS;
      while (received < 4 * 1024 * 1024 && Date.now() < deadline) await delay(100);
      expect(received, "the held stream flows again once the client reads").toBeGreaterThanOrEqual(4 * 1024 * 1024);
      reader.destroy();
    },
  );

  contractTest(
    "ports.hostile-server",
    "random bytes then a reset from the server inside reach the client as data and a closed connection, and the agent killed from inside closes the connection it carried; never a throw on the host, and the next connection gets a new agent",
    async () => {
      await using sandbox = await harness.createSandbox();
      await startServerInside(sandbox, HOSTILE_SERVER);
      await using exposed = await sandbox.ports.expose(INSIDE_PORT, { token: false });
      const first = await exchange(exposed.url, "anything\r\n");
      expect(first.text.length).toBeGreaterThan(0);
      expect(first.text.length).toBeLessThanOrEqual(1024 * 1024);
      const second = await exchange(exposed.url, "again\r\n");
      expect(second.text.length).toBeGreaterThan(0);
      // The host side closes a moment after the client saw the close: wait for it, bounded.
      for (let waited = 0; exposed.stats().connections > 0 && waited < WAIT_MS; waited += 100) await delay(100);
      expect(exposed.stats().connections).toBe(0);
      // The agent carrying a connection killed by sandbox code: the connection closes, the next one gets a new agent.
      await startServerInside(sandbox, NON_READING_SERVER, INSIDE_PORT + 1);
      await using held = await sandbox.ports.expose(INSIDE_PORT + 1, { token: false });
      const carried = await open(held.url);
      carried.on("error", () => {});
      const carriedClosed = new Promise<void>((resolve) => carried.once("close", () => resolve()));
      carried.write("hello");
      await sandbox.files.write("kill-agent.py", KILL_THE_AGENT);
      // The command may fail: on a backend whose commands run through the agent, it dies with the agent it killed.
      await sandbox.commands.run("python3 kill-agent.py").catch(() => undefined);
      await Promise.race([carriedClosed, delay(WAIT_MS).then(() => expect.fail("the carried connection stayed open after its agent was killed"))]);
      // A server started now (where commands ran through the agent, the earlier servers die with it, killed by their
      // tags) answers through a port: its connection starts a new agent.
      await startServerInside(sandbox, HOSTILE_SERVER, INSIDE_PORT + 2);
      await using after = await sandbox.ports.expose(INSIDE_PORT + 2, { token: false });
      const third = await exchange(after.url, "after\r\n");
      expect(third.text.length, `after the agent was killed: ${third.error ?? "no error"}`).toBeGreaterThan(0);
    },
  );

  contractTest(
    "ports.closes-on-close-and-kill",
    "the listener refuses connections after close(), and a second port after the sandbox's kill()",
    async () => {
      const sandbox = await harness.createSandbox();
      try {
        await startServerInside(sandbox, HTTP_SERVER);
        const closedPort = await sandbox.ports.expose(INSIDE_PORT);
        const url = closedPort.url;
        await closedPort.close();
        await closedPort.close();
        await expectRefusedSoon(url, "after close()");
        const killedPort: ExposedPort = await sandbox.ports.expose(INSIDE_PORT);
        const held = await open(killedPort.url);
        const heldClosed = new Promise<void>((resolve) => held.once("close", () => resolve()));
        held.on("error", () => {});
        await sandbox.kill();
        await expectRefusedSoon(killedPort.url, "after kill()");
        await heldClosed;
      } finally {
        await sandbox.kill();
      }
    },
  );

  contractTest("ports.closes-on-lifetime", "the listener refuses connections once the sandbox's lifetime ended", async () => {
    const sandbox = await harness.createSandbox({ timeoutMs: 15_000 });
    try {
      const exposed = await sandbox.ports.expose(INSIDE_PORT);
      expect((await sandbox.ended).reason).toBe("lifetime");
      await expectRefusedSoon(exposed.url, "after the lifetime ended");
    } finally {
      await sandbox.kill();
    }
  });

  contractTest(
    "ports.closes-on-loss",
    "the listener refuses connections once the sandbox was removed behind sbx's back (found lost by core's probe)",
    async (context: TestContext) => {
      const remove = options.removeOutOfBand;
      if (!remove) context.skip("the adapter's contract options give no removeOutOfBand hook");
      const sandbox = await harness.createSandbox();
      try {
        const exposed = await sandbox.ports.expose(INSIDE_PORT);
        await remove!(sandbox);
        const end = await Promise.race([sandbox.ended, delay(ENDED_WITHOUT_CALL_BOUND_MS).then(() => undefined)]);
        expect(end?.reason, "sandbox.ended after the removal").toBe("lost");
        await expectRefusedSoon(exposed.url, "after the sandbox was lost");
      } finally {
        await sandbox.kill();
      }
    },
  );
}

/** The exposed-port group on its own. */
export function describePortsContract(name: string, factory: SandboxProviderFactoryForContract, options?: SandboxContractOptions): void {
  describeGroup("exposed ports", name, factory, options, registerPortsTests);
}
