import { processIsAlive } from "@sbx/core/adapter";
import { randomBytes } from "node:crypto";
import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { createServer, type Server, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type Docker from "dockerode";

/** Where the per-sandbox host directory is mounted (read-only) inside the container. */
export const SANDBOX_SOCKET_DIRECTORY = "/run/sbx-egress";
/** The proxy socket's name in that directory. */
export const SOCKET_NAME = "proxy.sock";
/** The socket's path inside the sandbox. */
export const SANDBOX_SOCKET_PATH = `${SANDBOX_SOCKET_DIRECTORY}/${SOCKET_NAME}`;
/** Host directories are named `sbx-egress-<pid>-<random>` in the host's temporary directory (for the sweep). */
const DIRECTORY_PREFIX = "sbx-egress-";
/** How long the forwarder's probe may take to send its line. */
const PROBE_TIMEOUT_MS = 10_000;

/** One sandbox's host end of the Unix-socket transport: a listening proxy socket in a private host directory. */
export interface EgressSocket {
  /** The host directory (mode 0700, owned by this process's uid), bind-mounted read-only into the sandbox. */
  readonly directory: string;
  /** The bind mount to add to the container at create. */
  readonly mount: Docker.MountSettings;
  /** The line the forwarder sends on its first connection to prove it reached this socket. */
  readonly probeToken: string;
  /** True once the forwarder's probe arrived on this socket (only then is the transport used). */
  probed(): boolean;
  /** Hands every later connection to `onConnection` (the allowlist proxy). */
  serve(onConnection: (connection: Socket) => void): void;
  /** Stops listening, ends open connections and removes the host directory. Idempotent, synchronous. */
  close(): void;
}

const openDirectories = new Set<string>();
let exitHookInstalled = false;

/** Removes the directories of sockets still open when the process exits normally (a crash leaves them to the sweep). */
function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.once("exit", () => {
    for (const directory of openDirectories) rmSync(directory, { recursive: true, force: true });
  });
}

/**
 * Removes egress socket directories left by sbx processes that are gone (a host SIGKILLed or crashed; the dead-man's
 * switch ends their containers). Never touches a live process's directory. Returns the paths removed.
 */
export function sweepEgressDirectories(parent = tmpdir()): string[] {
  const removed: string[] = [];
  let names: string[];
  try {
    names = readdirSync(parent);
  } catch {
    return removed;
  }
  for (const name of names) {
    const match = /^sbx-egress-(\d+)-[A-Za-z0-9]+$/.exec(name);
    if (!match) continue;
    const pid = Number(match[1]);
    if (pid === process.pid || processIsAlive(pid)) continue;
    try {
      rmSync(join(parent, name), { recursive: true, force: true });
      removed.push(join(parent, name));
    } catch {
      // Another process swept it first, or it is not ours to remove: leave it.
    }
  }
  return removed;
}

/**
 * Creates the host end of the fast transport for one sandbox: a fresh directory (mkdtemp: mode 0700, this process's
 * uid) holding a listening Unix socket. The first connection must be the forwarder's probe (`probeToken` and a
 * newline; answered `ok`), sent before the sandbox runs any command; every later connection is a proxy connection.
 * The server is unref'd: it never keeps the host process alive.
 */
export async function openEgressSocket(): Promise<EgressSocket> {
  sweepEgressDirectories();
  const directory = mkdtempSync(join(tmpdir(), `${DIRECTORY_PREFIX}${process.pid}-`));
  openDirectories.add(directory);
  installExitHook();
  const probeToken = randomBytes(16).toString("hex");
  const connections = new Set<Socket>();
  let probed = false;
  let handler: ((connection: Socket) => void) | undefined;
  let closed = false;

  const probe = (connection: Socket) => {
    let line = "";
    const timer = setTimeout(() => connection.destroy(), PROBE_TIMEOUT_MS);
    connection.setEncoding("utf8");
    connection.on("data", (text: string) => {
      line += text;
      if (line.length > 128) return void connection.destroy();
      if (!line.includes("\n")) return;
      clearTimeout(timer);
      if (line === `${probeToken}\n`) {
        probed = true;
        connection.end("ok\n");
      } else connection.destroy();
    });
  };

  // allowHalfOpen: a client that shuts down its sending side still gets the whole answer (as over the exec stream).
  const server: Server = createServer({ allowHalfOpen: true }, (connection) => {
    if (closed) return void connection.destroy();
    connections.add(connection);
    connection.once("close", () => connections.delete(connection));
    connection.on("error", () => {});
    if (!probed) return probe(connection);
    if (!handler) return void connection.destroy();
    handler(connection);
  });
  server.on("error", () => {});
  try {
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(join(directory, SOCKET_NAME), () => resolve());
    });
  } catch (error) {
    openDirectories.delete(directory);
    rmSync(directory, { recursive: true, force: true });
    throw error;
  }
  server.unref();

  return {
    directory,
    mount: {
      Type: "bind",
      Source: directory,
      Target: SANDBOX_SOCKET_DIRECTORY,
      ReadOnly: true,
      BindOptions: { Propagation: "rprivate" },
    } as Docker.MountSettings,
    probeToken,
    probed: () => probed,
    serve(onConnection) {
      handler = onConnection;
    },
    close() {
      if (closed) return;
      closed = true;
      server.close();
      for (const connection of connections) connection.destroy();
      connections.clear();
      openDirectories.delete(directory);
      rmSync(directory, { recursive: true, force: true });
    },
  };
}
