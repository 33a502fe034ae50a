import type { Sandbox } from "@sbx/core";
import { afterAll, beforeAll, expect, it } from "vitest";
import type { EgressDenial } from "../src/egress/egress-proxy.js";
import { createTestSandbox, describeWithDocker } from "./docker-test-environment.js";
import { startLenientServer, startLoopbackServer, type LenientServer } from "./egress-test-servers.js";

/** Test names, mapped by the proxy's resolver (settings.egressHosts) to the test's own loopback server. */
const HOSTS = { "allowed.test": "127.0.0.1", "evil.test": "127.0.0.1" };

/**
 * A python3 one-liner run inside the sandbox: sends `payload` (base64) raw to the in-sandbox proxy port, reads until
 * the proxy closes (or 10 s), and prints the status line of every HTTP response it got back, one per line.
 */
function rawProxyCommand(payload: string): string {
  const encoded = Buffer.from(payload, "latin1").toString("base64");
  const script = [
    "import base64, re, socket",
    "s = socket.create_connection(('127.0.0.1', 3128), timeout=10)",
    `s.sendall(base64.b64decode('${encoded}'))`,
    "data = b''",
    "try:",
    "    while True:",
    "        chunk = s.recv(65536)",
    "        if not chunk: break",
    "        data += chunk",
    "except OSError as error:",
    "    print('ERROR', error)",
    "print('\\n'.join(re.findall(r'HTTP/1\\.[01] \\d{3}[^\\r\\n]*', data.decode('latin1'))))",
  ].join("\n");
  return `python3 -c "${script}"`;
}

describeWithDocker("Docker egress allowlist: every request on a connection is checked (no smuggling past the first)", () => {
  let server: LenientServer;
  let sandbox: Sandbox;
  const denials: EgressDenial[] = [];
  let allowed: string;
  let evil: string;
  // Every test's bytes go to one server that answers the first request head it sees and records everything.

  beforeAll(async () => {
    server = await startLenientServer();
    allowed = `allowed.test:${server.port}`;
    evil = `evil.test:${server.port}`;
    sandbox = await createTestSandbox(
      { network: { egress: "deny", allow: [allowed] } },
      { egressHosts: HOSTS, onEgressDenied: (denial: EgressDenial) => denials.push(denial) },
    );
  }, 120_000);
  afterAll(async () => {
    await sandbox?.kill();
    await server?.close();
  });

  const attack = async (payload: string) => (await sandbox.commands.run(rawProxyCommand(payload), { timeoutMs: 30_000 })).stdout.trim().split("\n");

  it("a header line ending in a bare LF is refused with 400; the second request it hides never reaches the server", async () => {
    const statuses = await attack(
      `GET http://${allowed}/ HTTP/1.1\r\nHost: ${allowed}\r\nX-Pad: 1\n\nGET http://${evil}/ HTTP/1.1\nHost: ${evil}\r\n\r\n`,
    );
    expect(statuses).toEqual(["HTTP/1.1 400 Bad Request"]);
    expect(server.received()).not.toContain("evil.test");
  });

  it("a pipelined second request for another host is never forwarded: the first is answered, the connection then ends", async () => {
    const statuses = await attack(
      `GET http://${allowed}/first HTTP/1.1\r\nHost: ${allowed}\r\n\r\nGET http://${evil}/second HTTP/1.1\r\nHost: ${evil}\r\n\r\n`,
    );
    expect(statuses).toEqual(["HTTP/1.1 200 OK"]);
    expect(server.received()).toContain("GET /first HTTP/1.1");
    expect(server.received()).not.toContain("evil.test");
  });

  it("Content-Length together with Transfer-Encoding is refused with 400; nothing reaches the server", async () => {
    const before = server.received().length;
    const statuses = await attack(
      `POST http://${allowed}/ HTTP/1.1\r\nHost: ${allowed}\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\nGET http://${evil}/ HTTP/1.1\r\nHost: ${evil}\r\n\r\n`,
    );
    expect(statuses).toEqual(["HTTP/1.1 400 Bad Request"]);
    expect(server.received().slice(before)).toBe("");
  });

  it("a chunked body is forwarded exactly to its last chunk; a request after it is not", async () => {
    const before = server.received().length;
    const statuses = await attack(
      `POST http://${allowed}/chunked HTTP/1.1\r\nHost: ${allowed}\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\nGET http://${evil}/ HTTP/1.1\r\nHost: ${evil}\r\n\r\n`,
    );
    expect(statuses).toEqual(["HTTP/1.1 200 OK"]);
    expect(server.received().slice(before)).toMatch(/^POST \/chunked HTTP\/1\.1\r\n[^]*\r\n\r\n3\r\nabc\r\n0\r\n\r\n$/);
  });

  it("a chunked body that does not frame exactly ends the connection; the request hidden behind it is not forwarded", async () => {
    await attack(
      `POST http://${allowed}/bad-chunks HTTP/1.1\r\nHost: ${allowed}\r\nTransfer-Encoding: chunked\r\n\r\n3\nabc\r\n0\r\n\r\nGET http://${evil}/ HTTP/1.1\r\nHost: ${evil}\r\n\r\n`,
    );
    expect(server.received()).not.toContain("evil.test");
    expect(denials.map((denial) => denial.reason)).toContainEqual(expect.stringMatching(/does not frame exactly \(a bare LF in the chunked body\)/));
  });

  it("well-framed bodies still arrive whole: 8 MiB by Content-Length and chunked, through the proxy", async () => {
    const counting = await startLoopbackServer({
      handler: (request, response) => {
        let bytes = 0;
        request.on("data", (chunk: Buffer) => (bytes += chunk.byteLength));
        request.on("end", () => response.end(`received ${bytes} ${request.headers["transfer-encoding"] ?? "length"}`));
      },
    });
    try {
      await using bodies = await createTestSandbox({ network: { egress: "deny", allow: [`allowed.test:${counting.port}`] } }, { egressHosts: HOSTS });
      const script = [
        "import sys, urllib.request",
        "data = b'x' * (8 * 1024 * 1024)",
        "chunks = (data[i:i + 65536] for i in range(0, len(data), 65536))",
        `url = 'http://allowed.test:${counting.port}/'`,
        "print(urllib.request.urlopen(urllib.request.Request(url, data=data, method='POST'), timeout=60).read().decode())",
        "print(urllib.request.urlopen(urllib.request.Request(url, data=chunks, method='POST', headers={'Transfer-Encoding': 'chunked'}), timeout=60).read().decode())",
      ].join("\n");
      const result = await bodies.commands.run(`python3 -c "${script}"`, { timeoutMs: 90_000 });
      expect(result.stdout.trim().split("\n")).toEqual(["received 8388608 length", "received 8388608 chunked"]);
    } finally {
      await counting.close();
    }
  }, 120_000);

  it("every smuggling attempt is reported as a refusal", () => {
    expect(denials.map((denial) => denial.reason)).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/bare LF/),
        expect.stringMatching(/Content-Length and Transfer-Encoding/),
        expect.stringMatching(/one request per connection/),
      ]),
    );
    expect(server.received()).not.toContain("evil.test");
  });
});
