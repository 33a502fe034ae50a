import { lookup } from "node:dns/promises";
import { isIP, connect, type Socket } from "node:net";
import type { Duplex } from "node:stream";
import { largeReads, type LargeReads } from "./large-reads.js";
import { normalizeHost, type Allowlist } from "./allowlist.js";
import { hostAddressRefusal } from "./host-addresses.js";
import { specialPurposeRange } from "./special-purpose-addresses.js";
import { bodyFramer, BodyFramingError, type BodyFraming } from "./request-body.js";

/** Longest request head the proxy reads before refusing (bytes). */
const MAX_HEAD_BYTES = 16 * 1024;
/** How long a client may take to send its request head. */
const HEAD_TIMEOUT_MS = 30_000;
/** How long the proxy waits for the upstream connection. */
const CONNECT_TIMEOUT_MS = 15_000;

/** One refused request, as the caller sees it. */
export interface EgressDenial {
  /** The host the client asked for (normalised: lower case, no trailing dot). */
  readonly host: string;
  readonly port: number;
  /** `"CONNECT"` for HTTPS (and any tunnelled protocol), else the HTTP method of a plain request. */
  readonly method: string;
  /** Why: not on the allowlist, a resolved address in a non-public range, resolution failed, malformed request. */
  readonly reason: string;
  /** ISO time of the refusal. */
  readonly at: string;
}

/** What the proxy needs from its sandbox. */
export interface EgressProxyPolicy {
  readonly allowlist: Allowlist;
  /** Names mapped to addresses by the caller (settings.egressHosts): used as given, before DNS. */
  readonly hosts: Readonly<Record<string, string>>;
  /**
   * Resolves a name `hosts` does not map to its addresses (settings.egressResolver); default the host's resolver
   * (`dns.lookup`). Its answers are checked like DNS answers: special-purpose ranges and the host's own addresses
   * need an IP/CIDR entry.
   */
  readonly resolve?: (host: string) => Promise<readonly string[]>;
  readonly onDenied: (denial: EgressDenial) => void;
  readonly onAllowed?: (request: { host: string; port: number; method: string; address: string }) => void;
}

class Refusal extends Error {
  constructor(
    readonly status: number,
    readonly host: string,
    readonly port: number,
    readonly method: string,
    readonly reason: string,
  ) {
    super(reason);
  }
}

function answer(client: Duplex, status: number, text: string, body: string): void {
  const bytes = Buffer.from(`${body}\n`, "utf8");
  client.end(
    `HTTP/1.1 ${status} ${text}\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: ${bytes.byteLength}\r\nConnection: close\r\nX-Sbx-Egress: denied\r\n\r\n${bytes.toString("utf8")}`,
  );
}

/** Reads the request head (up to the blank line), bounded in size and time. */
function readHead(client: Duplex): Promise<{ head: string; rest: Buffer }> {
  return new Promise((resolve, reject) => {
    let buffered = Buffer.alloc(0);
    const timer = setTimeout(() => finish(new Error("no request head in time")), HEAD_TIMEOUT_MS);
    const finish = (error?: Error, result?: { head: string; rest: Buffer }) => {
      clearTimeout(timer);
      client.off("data", onData);
      client.off("end", onEnd);
      client.off("close", onEnd);
      if (error) reject(error);
      else resolve(result!);
    };
    const onData = (chunk: Buffer) => {
      buffered = Buffer.concat([buffered, chunk]);
      const end = buffered.indexOf("\r\n\r\n");
      if (end >= 0) {
        client.pause();
        finish(undefined, { head: buffered.subarray(0, end).toString("latin1"), rest: buffered.subarray(end + 4) });
      } else if (buffered.byteLength > MAX_HEAD_BYTES) finish(new Error("request head too long"));
    };
    const onEnd = () => finish(new Error("the client closed before a request head"));
    client.on("data", onData);
    client.once("end", onEnd);
    client.once("close", onEnd);
  });
}

/** Splits `host:port` / `[v6]:port` (port required for CONNECT). */
function splitAuthority(authority: string, defaultPort: number | null): { host: string; port: number } | null {
  const match = /^(\[[^\]]+\]|[^:@\s/]+)(?::(\d{1,5}))?$/.exec(authority);
  if (!match) return null;
  const port = match[2] !== undefined ? Number(match[2]) : defaultPort;
  if (port === null || port < 1 || port > 65535) return null;
  return { host: normalizeHost(match[1]!), port };
}

interface ParsedRequest {
  readonly method: string;
  readonly host: string;
  readonly port: number;
  /** For plain HTTP: the head rewritten to origin form with `Connection: close`; null for CONNECT. */
  readonly forwardHead: string | null;
  /** For plain HTTP: how the body ends (the proxy forwards exactly that much, never a request after it). */
  readonly body: BodyFraming;
}

/**
 * Refuses a head whose framing two parsers could read differently (RFC 9112 §2.2, §5.2, §6.3): a bare LF or CR, a
 * control character, an obsolete folded line, and (for plain requests) Content-Length with Transfer-Encoding, more
 * than one Content-Length, a Content-Length that is not digits, or a Transfer-Encoding other than `chunked`.
 */
function checkHeadFraming(head: string, lines: readonly string[], method: string): void {
  if (/(?<!\r)\n/.test(head)) throw new Refusal(400, "", 0, method, "a bare LF in the request head (lines must end in CRLF)");
  if (/\r/.test(head.replaceAll("\r\n", ""))) throw new Refusal(400, "", 0, method, "a bare CR in the request head");
  if (lines.slice(1).some((line) => line.startsWith(" ") || line.startsWith("\t")))
    throw new Refusal(400, "", 0, method, "an obsolete folded header line (obs-fold)");
  // eslint-disable-next-line no-control-regex -- a control character in the request head is what is refused
  if (lines.some((line) => /[\x00-\x08\x0a-\x1f\x7f]/.test(line))) throw new Refusal(400, "", 0, method, "a control character in the request head");
}

/** How a plain request's body is framed, or a 400 when the headers make that ambiguous. */
function bodyFramingOf(headers: readonly string[], method: string): BodyFraming {
  const valuesOf = (name: string) =>
    headers.filter((line) => line.toLowerCase().startsWith(`${name}:`)).map((line) => line.slice(name.length + 1).trim());
  const lengths = valuesOf("content-length");
  const encodings = valuesOf("transfer-encoding");
  if (lengths.length > 0 && encodings.length > 0)
    throw new Refusal(400, "", 0, method, "Content-Length and Transfer-Encoding together (ambiguous framing)");
  if (lengths.length > 1) throw new Refusal(400, "", 0, method, "more than one Content-Length (ambiguous framing)");
  if (encodings.length > 1 || (encodings.length === 1 && encodings[0]!.toLowerCase() !== "chunked"))
    throw new Refusal(400, "", 0, method, `Transfer-Encoding ${JSON.stringify(encodings.join(", "))} (only a single "chunked" is forwarded)`);
  if (encodings.length === 1) return { kind: "chunked" };
  if (lengths.length === 0) return { kind: "none" };
  if (!/^\d{1,15}$/.test(lengths[0]!))
    throw new Refusal(400, "", 0, method, `Content-Length ${JSON.stringify(lengths[0]!.slice(0, 40))} is not a number`);
  const length = Number(lengths[0]);
  return length === 0 ? { kind: "none" } : { kind: "length", length };
}

/** Parses a proxy request: `CONNECT host:port` or an absolute `http://` URI whose host equals the Host header. */
export function parseProxyRequest(head: string): ParsedRequest {
  const lines = head.split("\r\n");
  const requestLine = /^([A-Z]{1,20}) (\S+) HTTP\/1\.[01]$/.exec(lines[0] ?? "");
  if (!requestLine) throw new Refusal(400, "", 0, "?", "malformed request line");
  const [, method, target] = requestLine as unknown as [string, string, string];
  checkHeadFraming(head, lines, method);
  const headers = lines.slice(1).filter((line) => line.length > 0);
  if (headers.some((line) => !/^[!#$%&'*+.^_`|~0-9A-Za-z-]+:/.test(line))) throw new Refusal(400, "", 0, method, "malformed header");
  if (method === "CONNECT") {
    const authority = splitAuthority(target, null);
    if (!authority) throw new Refusal(400, target, 0, method, "CONNECT needs host:port");
    return { method, host: authority.host, port: authority.port, forwardHead: null, body: { kind: "none" } };
  }
  const body = bodyFramingOf(headers, method);
  const uri = /^http:\/\/([^/?#]+)([^#]*)$/i.exec(target);
  if (!uri) throw new Refusal(400, target, 0, method, "only absolute http:// URIs are proxied (use CONNECT for https)");
  if (uri[1]!.includes("@")) throw new Refusal(400, uri[1]!, 0, method, "user information in the URI is refused");
  const authority = splitAuthority(uri[1]!, 80);
  if (!authority) throw new Refusal(400, uri[1]!, 0, method, "malformed host in the URI");
  const hostHeaders = headers.filter((line) => /^host:/i.test(line)).map((line) => line.slice(line.indexOf(":") + 1).trim());
  if (hostHeaders.length > 1) throw new Refusal(400, authority.host, authority.port, method, "more than one Host header");
  if (hostHeaders.length === 1) {
    const header = splitAuthority(hostHeaders[0]!, 80);
    if (!header || header.host !== authority.host || header.port !== authority.port)
      throw new Refusal(400, authority.host, authority.port, method, `the Host header ${JSON.stringify(hostHeaders[0])} differs from the URI's host`);
  }
  const kept = headers.filter((line) => !/^(connection|proxy-connection|proxy-authorization|keep-alive):/i.test(line));
  if (hostHeaders.length === 0) kept.push(`Host: ${uri[1]}`);
  const path = uri[2] || "/";
  return {
    method,
    host: authority.host,
    port: authority.port,
    forwardHead: [`${method} ${path.startsWith("/") ? path : `/${path}`} HTTP/1.1`, ...kept, "Connection: close", "", ""].join("\r\n"),
    body,
  };
}

/** Resolves the host itself (never the sandbox): a literal, the caller's mapping, or DNS, with the address checks. */
async function resolveChecked(request: ParsedRequest, policy: EgressProxyPolicy): Promise<string> {
  if (isIP(request.host) !== 0) return request.host;
  const mapped = policy.hosts[request.host];
  if (mapped !== undefined) return mapped;
  let addresses: readonly string[];
  try {
    addresses = policy.resolve
      ? await policy.resolve(request.host)
      : (await lookup(request.host, { all: true, verbatim: true })).map((entry) => entry.address);
  } catch (error) {
    throw new Refusal(
      502,
      request.host,
      request.port,
      request.method,
      `the proxy could not resolve it (${(error as NodeJS.ErrnoException).code ?? "lookup failed"})`,
    );
  }
  // Judged at every connection: the host's interfaces are read now (an address added since create counts too).
  const judged = addresses.map((address) => ({
    address,
    refusal: policy.allowlist.coversAddress(address) ? undefined : (hostAddressRefusal(address) ?? specialPurposeRange(address)),
  }));
  const usable = judged.filter((entry) => entry.refusal === undefined);
  if (usable.length === 0)
    throw new Refusal(
      403,
      request.host,
      request.port,
      request.method,
      `it resolves only to non-public addresses (${judged.map((entry) => `${entry.address}: ${entry.refusal}`).join("; ") || "none"}), which need an IP/CIDR entry`,
    );
  return usable[0]!.address;
}

/** Connects out, with reads of up to 1 MiB (see largeReads); `reads.pipeTo` starts the flow to the client. */
function dial(address: string, port: number, reads: LargeReads): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const upstream = connect({ host: address, port, onread: reads.onread });
    upstream.once("close", () => reads.dispose());
    const timer = setTimeout(() => upstream.destroy(new Error("connect timed out")), CONNECT_TIMEOUT_MS);
    upstream.once("connect", () => (clearTimeout(timer), resolve(upstream)));
    upstream.once("error", (error) => (clearTimeout(timer), reject(error)));
  });
}

/**
 * Forwards exactly the body of the one request whose head was checked (by Content-Length, or chunked framing to its
 * last chunk and trailers), then stops reading the client: bytes after it (a pipelined request, a smuggled second
 * request) are never forwarded and are reported as a refusal; the connection ends with the upstream's answer
 * (`Connection: close` both ways). A body that does not frame exactly ends both sides.
 */
function forwardOneBody(client: Duplex, upstream: Socket, request: ParsedRequest, rest: Buffer, policy: EgressProxyPolicy): void {
  const framer = bodyFramer(request.body);
  let reported = false;
  let waitingForDrain = false;
  const reportAfter = (after: Buffer) => {
    if (reported || after.byteLength === 0) return;
    reported = true;
    policy.onDenied({
      host: request.host,
      port: request.port,
      method: request.method,
      reason: "a second request on the connection was not forwarded (one request per connection; send it on a new one)",
      at: new Date().toISOString(),
    });
  };
  const onData = (chunk: Buffer) => {
    if (framer.done) {
      reportAfter(chunk);
      return;
    }
    let framed;
    try {
      framed = framer.push(chunk);
    } catch (error) {
      // Never thrown into the event loop: whatever went wrong, both sides end and the refusal is reported.
      const why = error instanceof BodyFramingError ? error.message : "the proxy could not frame it";
      policy.onDenied({
        host: request.host,
        port: request.port,
        method: request.method,
        reason: `the request body does not frame exactly (${why})`,
        at: new Date().toISOString(),
      });
      upstream.destroy();
      client.destroy();
      return;
    }
    if (framed.body.byteLength > 0 && !upstream.write(framed.body) && !waitingForDrain) {
      waitingForDrain = true;
      client.pause();
      upstream.once("drain", () => {
        waitingForDrain = false;
        client.resume();
      });
    }
    reportAfter(framed.after);
  };
  client.on("data", onData);
  // The client half-closing ends the upstream's side as a pipe would (a body cut short is the server's to refuse).
  client.once("end", () => upstream.end());
  if (rest.byteLength > 0) onData(rest);
  if (!waitingForDrain) client.resume();
}

/**
 * Serves one connection that a sandbox opened to its proxy address: reads the request head, applies the sandbox's
 * allowlist to the requested host and port (CONNECT authority, or the absolute URI's host, which must equal the Host
 * header), resolves the name on the host (pinning the checked address), connects out and relays bytes. Everything
 * else gets an HTTP error naming the host, and is reported through `onDenied`. Never throws.
 */
export function serveProxyConnection(client: Duplex, policy: EgressProxyPolicy): void {
  void (async () => {
    let request: ParsedRequest | undefined;
    try {
      const { head, rest } = await readHead(client);
      request = parseProxyRequest(head);
      if (!policy.allowlist.allows(request.host, request.port)) {
        throw new Refusal(403, request.host, request.port, request.method, "not on this sandbox's allowlist");
      }
      const address = await resolveChecked(request, policy);
      let upstream: Socket;
      const reads = largeReads();
      try {
        upstream = await dial(address, request.port, reads);
      } catch (error) {
        throw new Refusal(
          502,
          request.host,
          request.port,
          request.method,
          `the connection to ${address}:${request.port} failed (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`,
        );
      }
      policy.onAllowed?.({ host: request.host, port: request.port, method: request.method, address });
      upstream.setNoDelay(true);
      upstream.on("error", () => client.destroy());
      client.on("error", () => upstream.destroy());
      client.once("close", () => upstream.destroy());
      // When the upstream side is gone: flush what it sent, then close the sandbox side of the stream.
      upstream.once("close", () => {
        if (client.writableFinished) client.destroy();
        else {
          client.once("finish", () => client.destroy());
          if (!client.writableEnded) client.end();
        }
      });
      reads.pipeTo(upstream, client);
      upstream.once("end", () => client.end());
      if (request.forwardHead === null) {
        // CONNECT: what follows is the tunnel's own bytes (TLS or any protocol), opaque, to the checked host only.
        client.write("HTTP/1.1 200 Connection established\r\n\r\n");
        if (rest.byteLength > 0) upstream.write(rest);
        client.pipe(upstream);
        client.resume();
      } else {
        upstream.write(request.forwardHead);
        forwardOneBody(client, upstream, request, rest, policy);
      }
    } catch (error) {
      if (!(error instanceof Refusal)) return void client.destroy();
      const refusal = error;
      const target = refusal.host ? `${refusal.host}${refusal.port ? `:${refusal.port}` : ""}` : "the request";
      policy.onDenied({ host: refusal.host, port: refusal.port, method: refusal.method, reason: refusal.reason, at: new Date().toISOString() });
      if (!client.destroyed && !client.writableEnded) {
        answer(
          client,
          refusal.status,
          refusal.status === 403 ? "Forbidden" : refusal.status === 502 ? "Bad Gateway" : "Bad Request",
          `sbx egress: ${target} refused: ${refusal.reason}.`,
        );
        setTimeout(() => client.destroy(), 1_000).unref();
      }
    }
  })().catch(() => client.destroy());
}
