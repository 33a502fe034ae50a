import { AbortedError, ProviderError } from "../errors/index.js";
import type { DriverPortConnection, PortConnectionRequest } from "../v1/provider.js";
import type { AgentFrame } from "./agent-frames.js";
import type { AgentSession } from "./agent-session.js";

/** Longest part of the agent's message kept in an error (the agent is sandbox code). */
const MESSAGE_CHARACTERS = 500;

/** Largest body of one `port_data` frame the host sends, in bytes. */
const PORT_DATA_CHUNK_BYTES = 64 * 1024;

/** Largest credit either side may announce at once (the agent's window is 512 KiB; anything past this is not believed). */
const MAX_CREDIT_BYTES = 64 * 1024 * 1024;

/** A credit count from the agent: a positive integer up to `MAX_CREDIT_BYTES`, or undefined when it is not one. */
function creditOf(value: unknown): number | undefined {
  return typeof value === "number" && Number.isInteger(value) && value > 0 && value <= MAX_CREDIT_BYTES ? value : undefined;
}

/**
 * Opens a TCP connection to `127.0.0.1:port` inside the sandbox through the sbx agent (ADR 0053): a `connect` request
 * (answered `connected` with the agent's window, or an error), then `port_data` frames both ways, each direction under
 * credit: the host sends no more than the agent granted (`connected.window`, then `port_credit` as the agent wrote the
 * bytes into the socket), and the agent sends no more than `request.window` plus what the host granted back through
 * `consumed`. `port_end` is a half close, `port_closed` the end. Everything from the agent is checked: data past the
 * credit the host gave, a bad credit or an unknown frame ends the connection with an error, never a throw.
 */
export function connectThroughAgent(session: AgentSession, request: PortConnectionRequest, backend: string): Promise<DriverPortConnection> {
  let id = 0;
  let connected = false;
  let closed = false;
  let sendCredit = 0;
  let receiveAllowance = request.window;
  let ungranted = 0;
  const waiters: Array<() => void> = [];
  const wake = () => {
    for (const waiter of waiters.splice(0)) waiter();
  };
  const closeWith = (error?: Error) => {
    if (closed) return;
    closed = true;
    session.settle(id);
    wake();
    try {
      request.onClose(error);
    } catch {
      // The listener never throws by contract; a defect must not reach the agent's stream.
    }
  };
  const refusal = (header: AgentFrame["header"]): ProviderError => {
    const message = typeof header.message === "string" ? header.message.slice(0, MESSAGE_CHARACTERS) : "no message";
    const code = typeof header.code === "string" ? header.code.slice(0, 40) : "error";
    return new ProviderError({
      backend,
      message: `The sbx sandbox agent could not connect to port ${request.port} inside the sandbox (${code}): ${message}`,
    });
  };
  const connection: DriverPortConnection = {
    async write(chunk) {
      let offset = 0;
      while (offset < chunk.byteLength) {
        while (sendCredit === 0 && !closed) await new Promise<void>((resolve) => waiters.push(resolve));
        if (closed) throw new ProviderError({ backend, message: `The connection to port ${request.port} inside the sandbox is closed.` });
        const size = Math.min(sendCredit, PORT_DATA_CHUNK_BYTES, chunk.byteLength - offset);
        session.send({ type: "port_data", target: id }, chunk.subarray(offset, offset + size));
        sendCredit -= size;
        offset += size;
      }
    },
    consumed(bytes) {
      if (closed || !Number.isInteger(bytes) || bytes <= 0) return;
      ungranted += bytes;
      // Granted in batches of a quarter window: the agent keeps at least three quarters of its credit meanwhile.
      if (ungranted < request.window / 4) return;
      receiveAllowance += ungranted;
      session.send({ type: "port_credit", target: id, bytes: ungranted });
      ungranted = 0;
    },
    end() {
      if (!closed) session.send({ type: "port_end", target: id });
    },
    close() {
      if (closed) return;
      session.send({ type: "port_close", target: id });
      closeWith();
    },
  };
  return new Promise<DriverPortConnection>((resolve, reject) => {
    const onFrame = ({ header, body }: AgentFrame) => {
      try {
        if (closed) return;
        switch (header.type) {
          case "connected": {
            const window = creditOf(header.window);
            if (connected || window === undefined)
              return void fail(new ProviderError({ backend, message: "The sbx sandbox agent answered connect with a bad window." }));
            connected = true;
            sendCredit = window;
            request.signal.removeEventListener("abort", onAbort);
            resolve(connection);
            return;
          }
          case "port_data":
            if (!connected) return void fail(new ProviderError({ backend, message: "The sbx sandbox agent sent data before it connected." }));
            receiveAllowance -= body.byteLength;
            if (receiveAllowance < 0)
              return void fail(
                new ProviderError({ backend, message: `The sbx sandbox agent sent more than the credit the host gave for port ${request.port}.` }),
              );
            request.onData(body);
            return;
          case "port_credit": {
            const bytes = creditOf(header.bytes);
            if (bytes === undefined || sendCredit + bytes > MAX_CREDIT_BYTES)
              return void fail(new ProviderError({ backend, message: "The sbx sandbox agent granted a bad credit." }));
            sendCredit += bytes;
            wake();
            return;
          }
          case "port_end":
            request.onEnd();
            return;
          case "port_closed":
            if (!connected) return void fail(refusal(header));
            closeWith(typeof header.message === "string" ? refusal(header) : undefined);
            return;
          case "error":
            return void fail(refusal(header));
          default:
            return;
        }
      } catch {
        // A listener defect must not throw into the agent's stream.
      }
    };
    const fail = (error: Error) => {
      if (connected) {
        if (!closed) session.send({ type: "port_close", target: id });
        closeWith(error);
        return;
      }
      closed = true;
      session.settle(id);
      request.signal.removeEventListener("abort", onAbort);
      reject(error);
    };
    const onAbort = () => {
      if (connected || closed) return;
      session.send({ type: "port_close", target: id });
      fail(new AbortedError({ backend, cause: request.signal.reason }));
    };
    id = session.request(null, { type: "connect", port: request.port, window: request.window }, { onFrame, fail });
    if (request.signal.aborted) onAbort();
    else request.signal.addEventListener("abort", onAbort, { once: true });
  });
}
