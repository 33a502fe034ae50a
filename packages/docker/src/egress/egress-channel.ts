import { Duplex, type Readable } from "node:stream";
import type Docker from "dockerode";
import { StreamDemuxer } from "../stream-demuxer.js";
import { FORWARDER_SOURCE } from "./forwarder-source.js";

const FRAME_HEADER_BYTES = 9;
const MAX_FRAME_BYTES = 1024 * 1024;
const CHUNK_BYTES = 64 * 1024;
const enum FrameType {
  Ready = 0,
  Open = 1,
  Data = 2,
  End = 3,
  Reset = 4,
}

/** A running forwarder: one exec, many streams. */
export interface EgressChannel {
  /**
   * Resolves once the listener inside the sandbox is bound, with the transport the forwarder uses: `"unix"`, or
   * `"exec: <why the socket was not used>"`; rejects with why it could not start.
   */
  readonly ready: Promise<string>;
  /** True while the forwarder's exec stream is open. */
  readonly alive: () => boolean;
  /** Ends the forwarder's exec stream (the container's removal ends the process). */
  close(): void;
}

/**
 * Starts the forwarder inside the container as `options.user` (root, or the host process's uid for the Unix-socket
 * transport: never the sandbox user, so it can neither signal nor trace it). With `options.socket` it first probes
 * the host proxy's socket and, when that works, joins connections there itself; otherwise (and always without a
 * socket) it hands each connection it accepts to `onConnection` as a Duplex over its exec stream. Nothing the forwarder sends can throw into the host:
 * a malformed frame ends the channel (egress is then lost, never widened).
 */
export async function startEgressChannel(
  container: Docker.Container,
  options: {
    port: number;
    user: string;
    socket?: { path: string; probeToken: string };
    onConnection: (stream: Duplex) => void;
    onExit: (reason: string) => void;
  },
): Promise<EgressChannel> {
  const socketArguments = options.socket ? [options.socket.path, options.socket.probeToken] : [];
  const exec = await container.exec({
    Cmd: ["python3", "-I", "-u", "-c", FORWARDER_SOURCE, String(options.port), ...socketArguments],
    AttachStdin: true,
    AttachStdout: true,
    AttachStderr: true,
    Tty: false,
    User: options.user,
    Privileged: false,
  });
  const socket = (await exec.start({ hijack: true, stdin: true, Tty: false })) as Duplex & Readable;
  const streams = new Map<number, Duplex>();
  const pendingChunks: Buffer[] = [];
  let pendingBytes = 0;
  let open = true;
  let stderrTail = "";
  let markReady!: (transport: string) => void;
  let failReady!: (error: Error) => void;
  const ready = new Promise<string>((resolve, reject) => ((markReady = resolve), (failReady = reject)));
  ready.catch(() => {});

  const sendFrame = (stream: number, type: FrameType, payload: Buffer = Buffer.alloc(0), done?: () => void): void => {
    if (!open) return void done?.();
    const header = Buffer.alloc(FRAME_HEADER_BYTES);
    header.writeUInt32BE(5 + payload.byteLength, 0);
    header.writeUInt32BE(stream, 4);
    header.writeUInt8(type, 8);
    const flushed = socket.write(payload.byteLength > 0 ? Buffer.concat([header, payload]) : header);
    if (!done) return;
    if (flushed) done();
    else socket.once("drain", done);
  };

  const shutdown = (reason: string) => {
    if (!open) return;
    open = false;
    failReady(new Error(`the egress forwarder ended before it was ready: ${reason}`));
    for (const stream of streams.values()) stream.destroy();
    streams.clear();
    socket.destroy();
    options.onExit(reason);
  };

  const newStream = (id: number): Duplex => {
    const stream = new Duplex({
      read() {
        if (socket.isPaused()) socket.resume();
      },
      write(chunk: Buffer, _encoding, callback) {
        let offset = 0;
        const next = () => {
          if (offset >= chunk.byteLength) return callback();
          const slice = chunk.subarray(offset, offset + CHUNK_BYTES);
          offset += slice.byteLength;
          sendFrame(id, FrameType.Data, slice, next);
        };
        next();
      },
      final(callback) {
        sendFrame(id, FrameType.End);
        callback();
      },
      destroy(error, callback) {
        if (streams.delete(id)) sendFrame(id, FrameType.Reset);
        callback(error);
      },
    });
    stream.on("error", () => {});
    return stream;
  };

  const onFrame = (id: number, type: FrameType, payload: Buffer) => {
    if (type === FrameType.Ready) return markReady(payload.toString("utf8").slice(0, 200) || "exec");
    if (type === FrameType.Open) {
      if (streams.has(id)) return shutdown("the forwarder reused a stream id");
      const stream = newStream(id);
      streams.set(id, stream);
      options.onConnection(stream);
      return;
    }
    const stream = streams.get(id);
    if (!stream) return;
    if (type === FrameType.Data) {
      if (!stream.push(payload)) socket.pause();
    } else if (type === FrameType.End) stream.push(null);
    else if (type === FrameType.Reset) stream.destroy();
    else shutdown(`unknown frame type ${String(type)}`);
  };

  const demuxer = new StreamDemuxer(
    (chunk: Uint8Array) => {
      // Chunks are kept in a list and joined only once a whole frame is there (no copy per chunk).
      pendingChunks.push(Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength));
      pendingBytes += chunk.byteLength;
      while (open && pendingBytes >= FRAME_HEADER_BYTES) {
        if (pendingChunks[0]!.byteLength < FRAME_HEADER_BYTES) pendingChunks.splice(0, pendingChunks.length, Buffer.concat(pendingChunks));
        const first = pendingChunks[0]!;
        const length = first.readUInt32BE(0);
        if (length < 5 || length > MAX_FRAME_BYTES) return shutdown(`a frame of ${length} bytes`);
        if (pendingBytes < 4 + length) return;
        if (first.byteLength < 4 + length) pendingChunks.splice(0, pendingChunks.length, Buffer.concat(pendingChunks));
        const frame = pendingChunks[0]!;
        onFrame(frame.readUInt32BE(4), frame.readUInt8(8), frame.subarray(FRAME_HEADER_BYTES, 4 + length));
        const rest = frame.subarray(4 + length);
        pendingBytes -= 4 + length;
        if (rest.byteLength > 0) pendingChunks[0] = rest;
        else pendingChunks.shift();
      }
    },
    (chunk: Uint8Array) => {
      stderrTail = (stderrTail + Buffer.from(chunk).toString("utf8")).slice(-2048);
    },
  );
  socket.on("data", (chunk: Buffer) => {
    try {
      demuxer.push(chunk);
    } catch (error) {
      shutdown(`unreadable output (${(error as Error).message})`);
    }
  });
  socket.once("end", () => shutdown(`it exited${stderrTail ? `: ${stderrTail.trim()}` : ""}`));
  socket.once("close", () => shutdown(`it exited${stderrTail ? `: ${stderrTail.trim()}` : ""}`));
  socket.on("error", (error) => shutdown(error.message));
  return { ready, alive: () => open, close: () => shutdown("closed by sbx") };
}
