import type { Socket } from "node:net";
import type { DriverPortConnection, PortConnectionRequest } from "../v1/provider.js";

/** Bytes the sandbox side may send ahead of what the host's client took, per connection: 512 KiB (ADR 0053). */
export const PORT_RECEIVE_WINDOW_BYTES = 512 * 1024;

/** One carried connection: what it holds on the host now, and how to end it. */
export interface PortConnectionBridge {
  /** Bytes held on the host now: written to the client and not yet flushed, plus read from it and not yet sent in. */
  bufferedBytes(): number;
  /** Ends the connection at once (the listener closed). */
  close(): void;
}

/** How to open the sandbox side of a connection (the driver's `openPortConnection` through the call channel). */
export type OpenPortConnection = (request: Omit<PortConnectionRequest, "signal" | "port">) => Promise<DriverPortConnection>;

/**
 * Carries one accepted client socket to the port inside the sandbox (ADR 0053), both directions under backpressure:
 * the client is read only while the previous chunk is being taken by the sandbox side (`write` resolves within the
 * backend's credit), and the sandbox side is granted more only as the client's socket flushes what it was given
 * (`consumed` in the write callback). So the host holds at most one read chunk plus `PORT_RECEIVE_WINDOW_BYTES` per
 * connection, however fast either side sends or however slowly either reads. `first` is sent before anything else
 * (the request head the token check read). Nothing here throws into the event loop: every failure destroys the socket.
 */
export function bridgePortConnection(socket: Socket, first: Buffer, open: OpenPortConnection, onClosed: () => void): PortConnectionBridge {
  let connection: DriverPortConnection | undefined;
  let closed = false;
  let heldForSandbox = first.byteLength;
  let consumedEarly = 0;
  const finish = () => {
    if (closed) return;
    closed = true;
    connection?.close();
    socket.destroy();
    onClosed();
  };
  socket.on("error", finish);
  socket.on("close", finish);
  const consumed = (bytes: number) => {
    if (connection) connection.consumed(bytes);
    else consumedEarly += bytes;
  };
  const forward = (chunk: Buffer) => {
    socket.pause();
    heldForSandbox += chunk.byteLength;
    connection!.write(chunk).then(() => {
      heldForSandbox -= chunk.byteLength;
      if (!closed) socket.resume();
    }, finish);
  };
  open({
    window: PORT_RECEIVE_WINDOW_BYTES,
    onData: (chunk) => {
      if (closed) return;
      socket.write(chunk, () => consumed(chunk.byteLength));
    },
    onEnd: () => {
      if (!closed) socket.end();
    },
    onClose: (error) => {
      if (closed) return;
      // Both directions are done inside: end ours after the bytes still queued for the client.
      if (!error) return void socket.end();
      // Ended with an error inside (the server reset): the bytes it sent before are the client's, then the connection
      // ends. A client that never reads them holds the socket until the listener closes or the sandbox ends.
      if (socket.writableLength === 0) return finish();
      socket.write(Buffer.alloc(0), () => finish());
    },
  }).then(
    (opened) => {
      connection = opened;
      if (closed) return opened.close();
      if (consumedEarly > 0) opened.consumed(consumedEarly);
      opened.write(first).then(() => {
        heldForSandbox -= first.byteLength;
        if (closed) return;
        socket.on("data", forward);
        socket.on("end", () => connection?.end());
        socket.resume();
      }, finish);
    },
    () => finish(),
  );
  return {
    bufferedBytes: () => (closed ? 0 : heldForSandbox + socket.writableLength),
    close: finish,
  };
}
