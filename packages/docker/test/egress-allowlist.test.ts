import type { Sandbox } from "@sbx/core";
import { afterAll, beforeAll, expect, it } from "vitest";
import { dockerServersFixture, removeDockerNetwork } from "../../../contract-tests/fixtures/docker-servers.js";
import type { EgressDenial } from "../src/egress/egress-proxy.js";
import { createTestSandbox, describeWithDocker, TEST_IMAGE } from "./docker-test-environment.js";
import { fetchCommand, selfSignedCertificate, startLoopbackServer, type LoopbackServer } from "./egress-test-servers.js";

/** Test names, mapped by the proxy's resolver (settings.egressHosts) to the test's own loopback servers. */
const HOSTS = {
  "allowed.test": "127.0.0.1",
  "other.test": "127.0.0.1",
  "secure.test": "127.0.0.1",
  "api.wild.test": "127.0.0.1",
  "deep.api.wild.test": "127.0.0.1",
  "wild.test": "127.0.0.1",
};

describeWithDocker("Docker egress allowlist: a host-side proxy, the only way out of a NetworkMode none sandbox", () => {
  let plain: LoopbackServer;
  let secure: LoopbackServer;
  let byAddress: LoopbackServer;
  const fixture = dockerServersFixture({ image: TEST_IMAGE });
  let container: Awaited<ReturnType<typeof fixture.startServers>>;
  const denials: Array<EgressDenial & { sandboxId: string }> = [];
  let sandbox: Sandbox;

  beforeAll(async () => {
    plain = await startLoopbackServer();
    secure = await startLoopbackServer({ tls: selfSignedCertificate() });
    // An IP entry: 127.0.0.2 is the host's loopback too, and not in the sandbox's NO_PROXY (127.0.0.1 is).
    byAddress = await startLoopbackServer({ address: "127.0.0.2" });
    container = await fixture.startServers(1);
    sandbox = await createTestSandbox(
      {
        network: {
          egress: "deny",
          allow: [`allowed.test:${plain.port}`, `secure.test:${secure.port}`, `*.wild.test:${plain.port}`, `127.0.0.2:${byAddress.port}`],
        },
      },
      { egressHosts: HOSTS, onEgressDenied: (denial: EgressDenial & { sandboxId: string }) => denials.push(denial) },
    );
  }, 120_000);
  afterAll(async () => {
    await sandbox?.kill();
    await Promise.all([plain?.close(), secure?.close(), byAddress?.close(), container?.close()]);
    await removeDockerNetwork(fixture.networkName);
  });

  const run = async (command: string) => (await sandbox.commands.run(command, { timeoutMs: 30_000 })).stdout.trim();

  it("an allowed host answers over plain HTTP (matched on the URI host, equal to Host)", async () => {
    expect(await run(fetchCommand(`http://allowed.test:${plain.port}/`))).toBe(`STATUS 200 sbx-ok allowed.test:${plain.port}`);
  });

  it("an allowed host answers over HTTPS through CONNECT (self-signed certificate from this run)", async () => {
    expect(await run(fetchCommand(`https://secure.test:${secure.port}/`))).toBe(`STATUS 200 sbx-ok secure.test:${secure.port}`);
  });

  it("a host not on the list gets 403 naming it, the caller is told, the audit counts it, and DEBUG=sbx* logs it", async () => {
    const before = denials.length;
    const logged: string[] = [];
    const previousDebug = process.env.DEBUG;
    const write = process.stderr.write.bind(process.stderr);
    process.env.DEBUG = "sbx*";
    process.stderr.write = ((chunk: string | Uint8Array, ...rest: unknown[]) =>
      String(chunk).startsWith("sbx:docker:egress")
        ? (logged.push(String(chunk)), true)
        : write(chunk, ...(rest as []))) as typeof process.stderr.write;
    try {
      expect(await run(fetchCommand(`http://other.test:${plain.port}/`))).toBe(
        `STATUS 403 sbx egress: other.test:${plain.port} refused: not on this sandbox's allowlist.`,
      );
      expect(await run(fetchCommand(`https://other.test:${secure.port}/`))).toBe(
        "ERROR URLError <urlopen error Tunnel connection failed: 403 Forbidden>",
      );
      // The allowed name on a port the entry does not name is refused too.
      expect(await run(fetchCommand(`http://allowed.test:${secure.port}/`))).toMatch(/^STATUS 403 sbx egress: allowed\.test:\d+ refused/);
    } finally {
      process.stderr.write = write;
      if (previousDebug === undefined) delete process.env.DEBUG;
      else process.env.DEBUG = previousDebug;
    }
    expect(logged).toContain(`sbx:docker:egress sandbox ${sandbox.id}: denied GET other.test:${plain.port}: not on this sandbox's allowlist\n`);
    expect(denials.slice(before).map((denial) => [denial.method, denial.host, denial.port, denial.sandboxId])).toEqual([
      ["GET", "other.test", plain.port, sandbox.id],
      ["CONNECT", "other.test", secure.port, sandbox.id],
      ["GET", "allowed.test", secure.port, sandbox.id],
    ]);
    const notes = sandbox.audit().notes;
    expect(notes).toContain(`egress denied: CONNECT other.test:${secure.port} (not on this sandbox's allowlist)`);
    expect(notes.find((note) => /^egress denied: \d+ request/.test(note))).toMatch(new RegExp(`^egress denied: ${denials.length} request`));
  });

  it("a wildcard entry matches deeper names, not the bare suffix", async () => {
    expect(await run(fetchCommand(`http://api.wild.test:${plain.port}/`))).toBe(`STATUS 200 sbx-ok api.wild.test:${plain.port}`);
    expect(await run(fetchCommand(`http://deep.api.wild.test:${plain.port}/`))).toBe(`STATUS 200 sbx-ok deep.api.wild.test:${plain.port}`);
    expect(await run(fetchCommand(`http://wild.test:${plain.port}/`))).toMatch(/^STATUS 403 sbx egress: wild\.test:/);
  });

  it("an IP entry allows that literal address; another address is refused", async () => {
    expect(await run(fetchCommand(`http://127.0.0.2:${byAddress.port}/`))).toBe(`STATUS 200 sbx-ok 127.0.0.2:${byAddress.port}`);
    expect(await run(fetchCommand(`http://127.0.0.3:${byAddress.port}/`))).toMatch(
      /^STATUS 403 sbx egress: 127\.0\.0\.3:\d+ refused: not on this sandbox's allowlist/,
    );
  });

  it("a Host header that differs from the URI's host is refused (no smuggling a second name)", async () => {
    const script = `import socket; s = socket.create_connection(("127.0.0.1", 3128)); s.sendall(b"GET http://allowed.test:${plain.port}/ HTTP/1.1\\r\\nHost: other.test\\r\\n\\r\\n"); print(s.recv(200).decode().splitlines()[0])`;
    expect(await run(`python3 -c '${script}'`)).toBe("HTTP/1.1 400 Bad Request");
  });

  it("the audit record says what was requested, what was applied and how it is enforced", () => {
    const network = sandbox.audit().policies.network;
    expect(network.requested).toEqual({
      egress: "deny",
      allow: [`allowed.test:${plain.port}`, `secure.test:${secure.port}`, `*.wild.test:${plain.port}`, `127.0.0.2:${byAddress.port}`],
    });
    expect(network.applied).toMatchObject({
      egress: "deny",
      networkMode: "none",
      allow: [
        { entry: `allowed.test:${plain.port}`, kind: "host", match: "allowed.test", ports: [plain.port] },
        { entry: `secure.test:${secure.port}`, kind: "host", match: "secure.test", ports: [secure.port] },
        { entry: `*.wild.test:${plain.port}`, kind: "suffix", match: "*.wild.test", ports: [plain.port] },
        { entry: `127.0.0.2:${byAddress.port}`, kind: "address", match: "127.0.0.2/32", ports: [byAddress.port] },
      ],
    });
    expect(network.enforcement).toContain("NetworkMode none");
    expect(network.enforcement).toContain("CONNECT host and port");
    expect(network.enforcement).toContain("DNS is resolved by the proxy on the host");
    expect(network.enforcement).toContain("No TLS inspection");
  });

  describeWithDocker("bypass attempts, each performed for real, all fail", () => {
    it("with the proxy variables unset, neither the allowed name nor a server's IP is reachable (no resolver, no route)", async () => {
      const unset = "env -u HTTP_PROXY -u HTTPS_PROXY -u http_proxy -u https_proxy ";
      expect(await run(fetchCommand(`http://allowed.test:${plain.port}/`, unset))).toMatch(
        /^ERROR URLError .*(Name or service not known|Temporary failure in name resolution|No address associated)/,
      );
      expect(await run(fetchCommand(container.servers[0]!.url, unset))).toMatch(/^ERROR URLError .*Network is unreachable/);
    });

    it("a direct TCP connect by IP fails with ENETUNREACH; through the proxy the same IP gets 403", async () => {
      const ip = container.servers[0]!.host;
      expect(
        await run(`python3 -c 'import socket
try:
    socket.create_connection(("${ip}", 8080), timeout=5); print("connected")
except OSError as error:
    print(error.errno)'`),
      ).toBe("101");
      expect(await run(fetchCommand(container.servers[0]!.url))).toMatch(
        new RegExp(`^STATUS 403 sbx egress: ${ip.replace(/\./g, "\\.")}:8080 refused`),
      );
    });

    it("raw sockets are refused, and UDP to the server container's IP cannot be sent", async () => {
      const ip = container.servers[0]!.host;
      expect(
        await run(`python3 -c 'import socket
try:
    socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP); print("raw")
except OSError as error:
    print(error.errno)'`),
      ).toBe("1");
      expect(
        await run(`python3 -c 'import socket
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
try:
    s.sendto(b"x", ("${ip}", 53)); print("sent")
except OSError as error:
    print(error.errno)'`),
      ).toBe("101");
    });

    it("a DNS lookup of a test name from inside fails: the sandbox has no resolver", async () => {
      expect(
        await run(`python3 -c 'import socket
try:
    print(socket.getaddrinfo("allowed.test", 80))
except OSError as error:
    print("no-resolution", type(error).__name__)'`),
      ).toBe("no-resolution gaierror");
    });

    it("the sandbox user cannot kill the root forwarder; egress keeps working", async () => {
      const killed = await sandbox.commands.run(
        "pids=$(pgrep -u 0 -x python3); echo found $pids; for pid in $pids; do kill -9 $pid && echo killed-$pid; done",
        { timeoutMs: 30_000 },
      );
      expect(killed.stdout).toMatch(/^found \d+/);
      expect(killed.stdout).not.toContain("killed-");
      expect(killed.stderr).toMatch(/Operation not permitted/);
      expect(await run(fetchCommand(`http://allowed.test:${plain.port}/`))).toBe(`STATUS 200 sbx-ok allowed.test:${plain.port}`);
    });
  });

  it("a root sandbox that kills its forwarder only loses egress, and a listener it puts in its place reaches nothing", async () => {
    // "warm" (the default): this sandbox's root commands kill every root python3, which would include a started agent.
    await using rootSandbox = await createTestSandbox(
      { user: "root", network: { egress: "deny", allow: [`allowed.test:${plain.port}`] } },
      { egressHosts: HOSTS, agentCommands: "warm" },
    );
    const runRoot = async (command: string) => (await rootSandbox.commands.run(command, { timeoutMs: 30_000 })).stdout.trim();
    expect(await runRoot(fetchCommand(`http://allowed.test:${plain.port}/`))).toBe(`STATUS 200 sbx-ok allowed.test:${plain.port}`);
    await rootSandbox.commands.run("pkill -9 -u 0 -x python3", { timeoutMs: 30_000 });
    expect(await runRoot(fetchCommand(`http://allowed.test:${plain.port}/`))).toMatch(/^ERROR URLError .*Connection refused/);
    // A replacement "forwarder" on the proxy port can only talk to itself: there is no route and no resolver.
    const replacement = await rootSandbox.commands.start(`python3 -c 'import socket
listener = socket.socket(); listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1); listener.bind(("127.0.0.1", 3128)); listener.listen(1)
conn, _ = listener.accept(); conn.recv(4096)
try:
    socket.create_connection(("allowed.test", ${plain.port}), timeout=5)
    conn.sendall(b"HTTP/1.1 200 OK\\r\\nContent-Length: 7\\r\\n\\r\\nescaped")
except OSError as error:
    conn.sendall(b"HTTP/1.1 502 X\\r\\nContent-Length: 6\\r\\n\\r\\nfailed")'`);
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(await runRoot(fetchCommand(`http://allowed.test:${plain.port}/`))).toBe("STATUS 502 failed");
    await replacement.kill();
    expect(plain.hits.filter((host) => host.startsWith("allowed.test")).length).toBeGreaterThan(0);
  });

  it("an allowed name that DNS resolves to a loopback address is refused (the proxy resolves it, on the host)", async () => {
    // "localhost" is resolved by the host's own resolver (/etc/hosts), never a public lookup.
    await using local = await createTestSandbox({ network: { egress: "deny", allow: [`localhost:${plain.port}`] } });
    const script = `import socket; s = socket.create_connection(("127.0.0.1", 3128)); s.sendall(b"GET http://localhost:${plain.port}/ HTTP/1.1\\r\\nHost: localhost:${plain.port}\\r\\n\\r\\n"); print(s.recv(400).decode().split("\\r\\n\\r\\n")[1].strip())`;
    const answer = (await local.commands.run(`python3 -c '${script}'`, { timeoutMs: 30_000 })).stdout.trim();
    expect(answer).toMatch(
      new RegExp(
        `^sbx egress: localhost:${plain.port} refused: it resolves only to non-public addresses \\(.*127\\.0\\.0\\.1.*\\), which need an IP/CIDR entry\\.$`,
      ),
    );
    expect(plain.hits).not.toContain(`localhost:${plain.port}`);
  });

  it("two sandboxes with different allowlists do not share a policy", async () => {
    await using first = await createTestSandbox({ network: { egress: "deny", allow: [`allowed.test:${plain.port}`] } }, { egressHosts: HOSTS });
    await using second = await createTestSandbox({ network: { egress: "deny", allow: [`other.test:${plain.port}`] } }, { egressHosts: HOSTS });
    const fetchIn = async (target: Sandbox, host: string) =>
      (await target.commands.run(fetchCommand(`http://${host}:${plain.port}/`), { timeoutMs: 30_000 })).stdout.trim();
    const [firstAllowed, firstOther, secondAllowed, secondOther] = await Promise.all([
      fetchIn(first, "allowed.test"),
      fetchIn(first, "other.test"),
      fetchIn(second, "allowed.test"),
      fetchIn(second, "other.test"),
    ]);
    expect(firstAllowed).toBe(`STATUS 200 sbx-ok allowed.test:${plain.port}`);
    expect(firstOther).toMatch(/^STATUS 403 sbx egress: other\.test:/);
    expect(secondAllowed).toMatch(/^STATUS 403 sbx egress: allowed\.test:/);
    expect(secondOther).toBe(`STATUS 200 sbx-ok other.test:${plain.port}`);
  });
});
