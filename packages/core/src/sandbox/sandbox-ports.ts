import { createServer, type Server, type Socket } from "node:net";
import { InvalidArgumentError } from "../errors/index.js";
import { portExposeOptionsSchema } from "../v1/options.js";
import type { ExposedPort, ExposedPortStats, PortExposeOptions, SandboxPorts } from "../v1/sandbox.js";
import { checkPortToken, newPortToken } from "../security/port-token.js";
import { throwIfAborted } from "../security/guard.js";
import { validate } from "../security/validate.js";
import { bridgePortConnection, type PortConnectionBridge } from "./port-connection-bridge.js";
import type { SandboxState } from "./sandbox-state.js";

/** Connections one exposed port carries at once by default (ADR 0053). */
export const DEFAULT_MAX_PORT_CONNECTIONS = 32;

/** How long a client has to send its first request head when a token is required: 10 s. */
export const PORT_TOKEN_WAIT_MS = 10_000;

/** The answer to a client refused by the token check; nothing of it reached the sandbox. */
const REFUSED_RESPONSE =
  "HTTP/1.1 403 Forbidden\r\ncontent-type: text/plain\r\ncontent-length: 47\r\nconnection: close\r\n\r\nsbx: a valid X-Sbx-Port-Token header is needed\n";

/** Opens the host listener on 127.0.0.1, an ephemeral port. */
function listenOnLoopback(server: Server): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      server.off("error", reject);
      const address = server.address();
      resolve(typeof address === "object" && address !== null ? address.port : 0);
    });
  });
}

/**
 * `sandbox.ports` (ADR 0053): checks `PORTS`, listens on 127.0.0.1 (never another address), checks each connection's
 * token before anything reaches the sandbox, and carries it through the driver's `openPortConnection` under
 * backpressure (`bridgePortConnection`). The listener closes on `close()` and when the sandbox ends, whatever the
 * reason (kill, lifetime, loss: `sandbox.ended`); the host process's end closes it with the process.
 */
export function createSandboxPorts(state: SandboxState): SandboxPorts {
  const { driver, backend } = state;
  return {
    async expose(port: number, rawOptions?: PortExposeOptions): Promise<ExposedPort> {
      state.ensureOpen("expose a port");
      state.requireCapability("PORTS");
      if (typeof port !== "number" || !Number.isInteger(port) || port < 1 || port > 65_535)
        throw new InvalidArgumentError({
          field: "port",
          backend,
          message: `Invalid port: expected an integer from 1 to 65535, got ${String(port)}.`,
        });
      const options = validate(portExposeOptionsSchema, rawOptions ?? {}, "options");
      throwIfAborted(options.signal, backend);
      const openPortConnection = driver.openPortConnection;
      if (!openPortConnection) state.requireCapability("PORTS", "the driver has no openPortConnection method");
      const token = options.token === false ? null : (options.token ?? newPortToken());
      const maxConnections = options.maxConnections ?? DEFAULT_MAX_PORT_CONNECTIONS;
      const bridges = new Set<PortConnectionBridge>();
      const waiting = new Set<Socket>();
      let refused = 0;
      let closing: Promise<void> | undefined;
      // Aborts connections still being opened when the port closes.
      const closed = new AbortController();
      const server = createServer({ allowHalfOpen: true, pauseOnConnect: true });
      // A port does not keep the host process alive by itself (like the sandbox's own timers); its connections do.
      server.unref();
      server.on("error", () => {});
      const carry = (socket: Socket, first: Buffer) => {
        waiting.delete(socket);
        const bridge = bridgePortConnection(
          socket,
          first,
          (request) =>
            state.call("carry a connection to an exposed port", () => openPortConnection!({ ...request, port, signal: closed.signal }), {
              signal: closed.signal,
            }),
          () => bridges.delete(bridge),
        );
        bridges.add(bridge);
      };
      const refuse = (socket: Socket, answer: boolean) => {
        refused += 1;
        waiting.delete(socket);
        socket.removeAllListeners("data");
        if (answer) socket.end(REFUSED_RESPONSE);
        else socket.destroy();
        setTimeout(() => socket.destroy(), 1_000).unref();
      };
      server.on("connection", (socket: Socket) => {
        socket.on("error", () => {});
        socket.setNoDelay(true);
        if (closing || bridges.size + waiting.size >= maxConnections) return refuse(socket, false);
        if (token === null) return carry(socket, Buffer.alloc(0));
        waiting.add(socket);
        let received = Buffer.alloc(0);
        const timer = setTimeout(() => refuse(socket, true), PORT_TOKEN_WAIT_MS);
        timer.unref();
        socket.on("close", () => {
          clearTimeout(timer);
          waiting.delete(socket);
        });
        socket.on("data", (chunk: Buffer) => {
          received = Buffer.concat([received, chunk]);
          const check = checkPortToken(received, token);
          if (check.kind === "more") return;
          clearTimeout(timer);
          if (check.kind === "refused") return refuse(socket, true);
          socket.pause();
          socket.removeAllListeners("data");
          carry(socket, check.forward);
        });
        socket.resume();
      });
      const listening = listenOnLoopback(server);
      const hostPort = await listening;
      const close = (): Promise<void> => {
        closing ??= new Promise<void>((resolve) => {
          closed.abort();
          server.close(() => resolve());
          for (const socket of waiting) socket.destroy();
          waiting.clear();
          for (const bridge of [...bridges]) bridge.close();
          bridges.clear();
        });
        return closing;
      };
      // Every way the sandbox ends (kill, lifetime, loss) resolves `ended`: the listener closes with it.
      void state.endWatch.ended.then(close);
      if (state.closedAt !== null) {
        await close();
        state.ensureOpen("expose a port");
      }
      const stats = (): ExposedPortStats => {
        let bufferedBytes = 0;
        for (const bridge of bridges) bufferedBytes += bridge.bufferedBytes();
        return { connections: bridges.size + waiting.size, bufferedBytes, refused };
      };
      return {
        port,
        url: `http://127.0.0.1:${hostPort}`,
        token,
        stats,
        close,
        [Symbol.asyncDispose]: close,
      };
    },
  };
}
