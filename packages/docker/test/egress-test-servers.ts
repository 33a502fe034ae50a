import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import http from "node:http";
import https from "node:https";
import { createServer, type AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** A server the test started on the host's loopback; the allowlist proxy (in the test process) connects to it. */
export interface LoopbackServer {
  readonly port: number;
  /** Requests it answered, by Host header. */
  readonly hits: string[];
  close(): Promise<void>;
}

/** Starts an HTTP (or, with `tls`, HTTPS) server on `address` (default 127.0.0.1) and `port` (default any) answering `sbx-ok <Host>`. */
export async function startLoopbackServer(
  options: { address?: string; port?: number; tls?: { key: Buffer; cert: Buffer }; handler?: http.RequestListener } = {},
): Promise<LoopbackServer> {
  const hits: string[] = [];
  const handler: http.RequestListener =
    options.handler ??
    ((request, response) => {
      hits.push(request.headers.host ?? "");
      response.end(`sbx-ok ${request.headers.host ?? ""}`);
    });
  const server = options.tls ? https.createServer({ key: options.tls.key, cert: options.tls.cert }, handler) : http.createServer(handler);
  await new Promise<void>((resolve) => server.listen(options.port ?? 0, options.address ?? "127.0.0.1", resolve));
  return {
    port: (server.address() as AddressInfo).port,
    hits,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A self-signed certificate for `secure.test`, generated with openssl for this run. */
export function selfSignedCertificate(): { key: Buffer; cert: Buffer } {
  const directory = mkdtempSync(join(tmpdir(), "sbx-egress-cert-"));
  try {
    execFileSync(
      "openssl",
      [
        "req",
        "-x509",
        "-newkey",
        "rsa:2048",
        "-nodes",
        "-days",
        "1",
        "-subj",
        "/CN=secure.test",
        "-addext",
        "subjectAltName=DNS:secure.test",
        "-keyout",
        join(directory, "key.pem"),
        "-out",
        join(directory, "cert.pem"),
      ],
      { stdio: "ignore" },
    );
    return { key: readFileSync(join(directory, "key.pem")), cert: readFileSync(join(directory, "cert.pem")) };
  } finally {
    rmSync(directory, { recursive: true, force: true });
  }
}

/**
 * A python3 one-liner fetching `url` through whatever proxy variables the command has (urllib honours them), with
 * TLS verification off for the test's self-signed certificate. Prints `STATUS <code> <body>` or `ERROR <type> <text>`.
 */
export function fetchCommand(url: string, prefix = ""): string {
  const script = [
    "import ssl, sys, urllib.request, urllib.error",
    "context = ssl._create_unverified_context()",
    "try:",
    "    response = urllib.request.urlopen(sys.argv[1], timeout=10, context=context)",
    '    print("STATUS", response.status, response.read().decode())',
    "except urllib.error.HTTPError as error:",
    '    print("STATUS", error.code, error.read().decode().strip())',
    "except Exception as error:",
    '    print("ERROR", type(error).__name__, error)',
  ].join("\n");
  return `${prefix}python3 -c '${script}' '${url}'`;
}

/** A raw TCP origin on loopback that records every byte it is sent (see startLenientServer). */
export interface LenientServer {
  readonly port: number;
  /** Every byte received so far, on every connection, in arrival order (latin1). */
  received(): string;
  close(): Promise<void>;
}

/**
 * An origin as lenient as the worst real one: it answers `200 ok` as soon as it sees the end of a request head
 * (`\r\n\r\n` or a bare `\n\n`), keeps reading for 300 ms and records every byte, so anything a proxy lets through
 * after the request it checked (a pipelined request, a smuggled body) shows up in `received()`.
 */
export async function startLenientServer(): Promise<LenientServer> {
  const chunks: string[] = [];
  const sockets = new Set<import("node:net").Socket>();
  const server = createServer((socket) => {
    sockets.add(socket);
    socket.once("close", () => sockets.delete(socket));
    socket.on("error", () => socket.destroy());
    let seen = "";
    let answered = false;
    socket.on("data", (chunk: Buffer) => {
      const text = chunk.toString("latin1");
      chunks.push(text);
      seen += text;
      if (answered || !/\r?\n\r?\n/.test(seen)) return;
      answered = true;
      socket.write("HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok");
      setTimeout(() => socket.end(), 300);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    port: (server.address() as AddressInfo).port,
    received: () => chunks.join(""),
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
