/**
 * Minimal server side of the Connect protocol (JSON codec) over node:http,
 * enough for the unary and server-streaming calls the e2b SDK makes to envd.
 */
import type { IncomingMessage, ServerResponse } from "node:http";

/** Connect error codes used by the emulator, with their HTTP status for unary responses. */
export const connectErrorStatus = {
  canceled: 499,
  unknown: 500,
  invalid_argument: 400,
  deadline_exceeded: 504,
  not_found: 404,
  already_exists: 409,
  permission_denied: 403,
  resource_exhausted: 429,
  failed_precondition: 400,
  aborted: 409,
  out_of_range: 400,
  unimplemented: 501,
  internal: 500,
  unavailable: 503,
  data_loss: 500,
  unauthenticated: 401,
} as const;

/** A Connect error code name such as "not_found". */
export type ConnectErrorCode = keyof typeof connectErrorStatus;

/** An error carrying a Connect code; handlers throw it and the transport encodes it. */
export class ConnectProtocolError extends Error {
  constructor(
    readonly code: ConnectErrorCode,
    message: string,
  ) {
    super(message);
    this.name = "ConnectProtocolError";
  }
}

/** Envelope flag marking the end-of-stream message of a server stream. */
const END_STREAM_FLAG = 0x02;

/** Encodes one Connect envelope: flag byte, 4-byte big-endian length, payload. */
export function encodeEnvelope(flags: number, payload: unknown): Buffer {
  const body = Buffer.from(JSON.stringify(payload), "utf8");
  const header = Buffer.alloc(5);
  header.writeUInt8(flags, 0);
  header.writeUInt32BE(body.length, 1);
  return Buffer.concat([header, body]);
}

/** Reads a whole request body into memory (request messages are small). */
export async function readBody(request: IncomingMessage, limitBytes = 64 * 1024 * 1024): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let total = 0;
  for await (const chunk of request) {
    const buffer = chunk as Buffer;
    total += buffer.length;
    if (total > limitBytes) throw new ConnectProtocolError("resource_exhausted", "request body too large");
    chunks.push(buffer);
  }
  return Buffer.concat(chunks);
}

/** True when the request uses the streaming content type (application/connect+json). */
export function isStreamingRequest(request: IncomingMessage): boolean {
  return (request.headers["content-type"] ?? "").startsWith("application/connect+");
}

/** Decodes the request message of a unary (plain JSON) or streaming (one envelope) call. */
export async function readRequestMessage<T>(request: IncomingMessage): Promise<T> {
  const body = await readBody(request);
  if (isStreamingRequest(request)) {
    if (body.length < 5) throw new ConnectProtocolError("invalid_argument", "missing request envelope");
    const length = body.readUInt32BE(1);
    const payload = body.subarray(5, 5 + length).toString("utf8");
    return (payload ? JSON.parse(payload) : {}) as T;
  }
  const text = body.toString("utf8");
  return (text ? JSON.parse(text) : {}) as T;
}

/** Writes a unary success response. */
export function sendUnaryResponse(response: ServerResponse, message: unknown): void {
  const body = JSON.stringify(message ?? {});
  response.writeHead(200, { "content-type": "application/json", "content-length": Buffer.byteLength(body) });
  response.end(body);
}

/** Writes a unary error response with the HTTP status matching the Connect code. */
export function sendUnaryError(response: ServerResponse, code: ConnectErrorCode, message: string): void {
  const body = JSON.stringify({ code, message });
  response.writeHead(connectErrorStatus[code], {
    "content-type": "application/json",
    "content-length": Buffer.byteLength(body),
  });
  response.end(body);
}

/** Converts any thrown value into a Connect code and message. */
export function toConnectError(error: unknown): { code: ConnectErrorCode; message: string } {
  if (error instanceof ConnectProtocolError) return { code: error.code, message: error.message };
  return { code: "internal", message: error instanceof Error ? error.message : String(error) };
}

/**
 * A server-streaming response. Messages are written as envelopes; `end` writes
 * the mandatory end-stream frame (optionally carrying an error).
 */
export class ServerStream {
  private finished = false;
  private keepaliveTimer: NodeJS.Timeout | undefined;

  constructor(
    private readonly response: ServerResponse,
    keepaliveMessage?: unknown,
    keepaliveSeconds?: number,
  ) {
    response.writeHead(200, { "content-type": "application/connect+json" });
    response.flushHeaders();
    if (keepaliveMessage !== undefined && keepaliveSeconds && keepaliveSeconds > 0) {
      this.keepaliveTimer = setInterval(() => this.send(keepaliveMessage), keepaliveSeconds * 1000);
      this.keepaliveTimer.unref();
    }
    response.on("close", () => this.stopKeepalive());
  }

  /** True once the client went away or the stream was ended. */
  get closed(): boolean {
    return this.finished || this.response.destroyed || this.response.writableEnded;
  }

  /** Writes one message; returns false when the socket buffer is full (wait for `drain`). */
  send(message: unknown): boolean {
    if (this.closed) return true;
    return this.response.write(encodeEnvelope(0, message));
  }

  /** Resolves when the response can take more data (or is gone). */
  waitForDrain(): Promise<void> {
    if (this.closed || !this.response.writableNeedDrain) return Promise.resolve();
    return new Promise((resolve) => {
      const done = () => {
        this.response.off("drain", done);
        this.response.off("close", done);
        resolve();
      };
      this.response.once("drain", done);
      this.response.once("close", done);
    });
  }

  /** Registers a callback for when the client disconnects. */
  onClose(callback: () => void): void {
    this.response.on("close", callback);
  }

  /** Writes the end-stream frame and ends the HTTP response. */
  end(error?: { code: ConnectErrorCode; message: string }): void {
    this.stopKeepalive();
    if (this.closed) return;
    this.finished = true;
    this.response.end(encodeEnvelope(END_STREAM_FLAG, error ? { error } : {}));
  }

  private stopKeepalive(): void {
    if (this.keepaliveTimer) clearInterval(this.keepaliveTimer);
    this.keepaliveTimer = undefined;
  }
}
