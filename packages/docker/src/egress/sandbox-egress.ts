import type { PolicyRecord } from "@sbx/core";
import type Docker from "dockerode";
import { compileAllowlist, type Allowlist } from "./allowlist.js";
import { startEgressChannel, type EgressChannel } from "./egress-channel.js";
import { serveProxyConnection, type EgressDenial } from "./egress-proxy.js";
import { SANDBOX_SOCKET_PATH, type EgressSocket } from "./egress-socket.js";

/** The loopback port the forwarder listens on inside the sandbox. */
export const SANDBOX_PROXY_PORT = 3128;
/** Denials listed one by one in the audit notes; later ones are only counted. */
const LISTED_DENIALS = 50;

/** Debug log line for `DEBUG=sbx*` (or `sbx:docker`), on stderr. */
export function debugEgress(message: string): void {
  const pattern = process.env.DEBUG ?? "";
  if (/(^|,)\s*(sbx(:docker)?(:egress)?(:\*|\*)?|\*)\s*($|,)/.test(pattern)) process.stderr.write(`sbx:docker:egress ${message}\n`);
}

/** One sandbox's allowlist enforcement: its own policy, forwarder, proxy and denial record. */
export interface SandboxEgress {
  /** Proxy variables every command of the sandbox gets. */
  readonly environment: Readonly<Record<string, string>>;
  /** The network policy record for the audit. */
  readonly record: PolicyRecord;
  /** How connections reach the host proxy: `"unix-socket"` (the fast path) or `"exec-stream"` (the fallback). */
  readonly transport: EgressTransport;
  /** Refusals so far (a copy). */
  denials(): EgressDenial[];
  /** Stops relaying (the container's removal ends the forwarder). */
  close(): void;
}

/** How the forwarder reaches the host proxy (adr/0027). */
export type EgressTransport = "unix-socket" | "exec-stream";

/** What the audit says about the transport: which one, and why the fallback was used. */
export interface TransportRecord {
  readonly transport: EgressTransport;
  /** Why the Unix socket was not used (exec-stream only). */
  readonly reason?: string;
}

/** The proxy environment for the in-sandbox listener: upper and lower case, loopback excluded. */
export function proxyEnvironment(port: number): Record<string, string> {
  const url = `http://127.0.0.1:${port}`;
  return {
    HTTP_PROXY: url,
    HTTPS_PROXY: url,
    http_proxy: url,
    https_proxy: url,
    NO_PROXY: "localhost,127.0.0.1,::1",
    no_proxy: "localhost,127.0.0.1,::1",
  };
}

/** The audit record of an allowlisted sandbox: requested, applied (normalised), and how it is enforced. */
export function allowlistRecord(
  requested: readonly string[],
  allowlist: Allowlist,
  networkMode: string,
  hosts: Readonly<Record<string, string>>,
  transport: TransportRecord = { transport: "exec-stream" },
  customResolver = false,
): PolicyRecord {
  const otherwise = customResolver
    ? "settings.egressResolver, called in the sbx process (answers checked like DNS)"
    : "the host's DNS, from the sbx process";
  const path =
    transport.transport === "unix-socket"
      ? `Egress exists only through a forwarder (started by sbx, not as the sandbox user) listening on 127.0.0.1:${SANDBOX_PROXY_PORT} inside the sandbox, which joins each connection to the sbx host process's proxy over a Unix socket (${SANDBOX_SOCKET_PATH}, in a host directory private to this sandbox, mode 0700, bind-mounted read-only); HTTP_PROXY/HTTPS_PROXY (both cases) point every command at it.`
      : `Egress exists only through a forwarder (root, started by sbx) listening on 127.0.0.1:${SANDBOX_PROXY_PORT} inside the sandbox, which carries each connection over its Docker exec stream to a proxy in the sbx host process${transport.reason ? ` (the Unix-socket transport was not used: ${transport.reason})` : ""}; HTTP_PROXY/HTTPS_PROXY (both cases) point every command at it.`;
  return {
    requested: { egress: "deny", allow: [...requested] },
    applied: {
      egress: "deny",
      networkMode,
      allow: allowlist.entries.map((entry) => ({
        entry: entry.text,
        kind: entry.kind,
        match: entry.kind === "host" ? entry.host : entry.kind === "suffix" ? `*.${entry.suffix}` : `${entry.address}/${entry.prefix}`,
        ports: entry.port === null ? [...allowlist.defaultPorts] : [entry.port],
      })),
      proxy: {
        listen: `127.0.0.1:${SANDBOX_PROXY_PORT} inside the sandbox`,
        enforcedBy: "the sbx host process",
        transport: transport.transport,
        ...(transport.reason ? { transportFallbackReason: transport.reason } : {}),
        protocols: ["HTTP CONNECT (https and any TCP tunnel)", "plain HTTP with an absolute http:// URI"],
      },
      resolver: Object.keys(hosts).length > 0 ? { mapped: Object.keys(hosts).sort(), otherwise } : otherwise,
    },
    enforcement: [
      `Docker NetworkMode ${networkMode}: the container has only a loopback interface, so no packet can leave it by any other path (direct IPs, UDP, raw sockets and DNS queries all fail: there is no route and no resolver).`,
      path,
      "The host proxy applies this sandbox's allowlist to every connection: HTTPS (and other tunnels) by the CONNECT host and port, plain HTTP by the absolute URI's host and port, which must equal the Host header (one request per connection, forwarded with Connection: close; heads with ambiguous framing such as a bare LF, obsolete line folding, Content-Length with Transfer-Encoding or two Content-Lengths get 400, and nothing after the checked request's body is forwarded).",
      `Entries match exactly (names compared in lower case without a trailing dot), *.suffix matches any deeper name (not the suffix itself), IP/CIDR entries match IP literals; an entry without a port allows ports ${allowlist.defaultPorts.join(", ")}.`,
      "DNS is resolved by the proxy on the host, never in the sandbox; the checked address is the one dialled. Names resolving only to addresses in the IANA special-purpose ranges (IPv4 and IPv6: loopback, private, link-local (metadata), CGNAT, unique-local, documentation, benchmarking, 6to4, NAT64, Teredo, discard-only, multicast, unspecified, reserved, and the IPv4-mapped forms of all of them) or to an address bound on one of this host's own interfaces (read at each connection) are refused unless an IP/CIDR entry covers them (settings.egressHosts mappings are used as given).",
      "Refusals answer HTTP 403 (not allowed) or 502 (unreachable) naming the host, are counted in the audit notes and reported to settings.onEgressDenied.",
      "No TLS inspection: the name inside TLS (SNI) and the inner Host of a tunnel are not checked, so a client may reach other names served by an allowed server's address (domain fronting). Clients that ignore the proxy variables get no connection at all (fail closed).",
    ].join(" "),
  };
}

/**
 * Starts allowlist enforcement for one container: compiles the allowlist (invalid entries raise before anything
 * runs), starts the forwarder and waits until it listens. With `socket` (the host end, mounted into the container at
 * create) the forwarder probes it and uses it when the probe reaches this process; else, and on any failure of the
 * probe, connections go over the forwarder's exec stream (`unavailableReason` says why, for the audit). The same
 * proxy and allowlist serve both transports.
 */
export async function startSandboxEgress(
  container: Docker.Container,
  options: {
    allow: readonly string[];
    ports: readonly number[];
    hosts: Readonly<Record<string, string>>;
    resolve?: (host: string) => Promise<readonly string[]>;
    networkMode: string;
    onDenied?: (denial: EgressDenial & { sandboxId: string }) => void;
    sandboxId: string;
    notes: string[];
    socket?: EgressSocket;
    socketUser?: string;
    unavailableReason?: string;
  },
): Promise<SandboxEgress> {
  const allowlist = compileAllowlist(options.allow, options.ports);
  // The sandbox's live audit notes: denials are recorded there as they happen (core copies them per audit()).
  const notes = options.notes;
  const denials: EgressDenial[] = [];
  let summaryIndex = -1;
  const onDenied = (denial: EgressDenial) => {
    denials.push(denial);
    if (denials.length > 1000) denials.shift();
    const count = (summaryIndex >= 0 ? Number(/^egress denied: (\d+)/.exec(notes[summaryIndex]!)?.[1] ?? 0) : 0) + 1;
    const summary = `egress denied: ${count} request(s) refused by the allowlist proxy`;
    if (summaryIndex < 0) summaryIndex = notes.push(summary) - 1;
    else notes[summaryIndex] = summary;
    if (count <= LISTED_DENIALS) notes.push(`egress denied: ${denial.method} ${denial.host}:${denial.port} (${denial.reason})`);
    debugEgress(`sandbox ${options.sandboxId}: denied ${denial.method} ${denial.host}:${denial.port}: ${denial.reason}`);
    try {
      options.onDenied?.({ ...denial, sandboxId: options.sandboxId });
    } catch {
      // A caller's callback never breaks the proxy.
    }
  };
  const policy = {
    allowlist,
    hosts: options.hosts,
    resolve: options.resolve,
    onDenied,
    onAllowed: (request: { host: string; port: number; method: string; address: string }) =>
      debugEgress(`sandbox ${options.sandboxId}: allowed ${request.method} ${request.host}:${request.port} via ${request.address}`),
  };
  const socket = options.socket;
  socket?.serve((connection) => serveProxyConnection(connection, policy));
  let channel: EgressChannel | undefined;
  const close = () => {
    channel?.close();
    socket?.close();
  };
  try {
    channel = await startEgressChannel(container, {
      port: SANDBOX_PROXY_PORT,
      user: socket ? (options.socketUser ?? "0:0") : "0:0",
      socket: socket ? { path: SANDBOX_SOCKET_PATH, probeToken: socket.probeToken } : undefined,
      onConnection: (stream) => serveProxyConnection(stream, policy),
      onExit: (reason) => {
        debugEgress(`sandbox ${options.sandboxId}: forwarder ended (${reason}); the sandbox has no egress now`);
        if (channel) notes.push(`egress forwarder ended (${reason}): the sandbox has no egress from then on`);
        socket?.close();
      },
    });
    const announced = await channel.ready;
    let transport: TransportRecord;
    if (announced === "unix") {
      // The forwarder says it reached a socket: only this process's socket, having seen the probe, makes that true.
      if (!socket?.probed()) throw new Error("the forwarder reported the Unix-socket transport, but the probe never reached this process's socket");
      transport = { transport: "unix-socket" };
    } else {
      socket?.close();
      transport = { transport: "exec-stream", reason: options.unavailableReason ?? (announced.replace(/^exec:?\s*/, "") || undefined) };
    }
    debugEgress(`sandbox ${options.sandboxId}: egress transport ${transport.transport}${transport.reason ? ` (${transport.reason})` : ""}`);
    const record = allowlistRecord(options.allow, allowlist, options.networkMode, options.hosts, transport, options.resolve !== undefined);
    return { environment: proxyEnvironment(SANDBOX_PROXY_PORT), record, transport: transport.transport, denials: () => [...denials], close };
  } catch (error) {
    close();
    throw error;
  }
}
