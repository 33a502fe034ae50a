/**
 * One `pods/exec` stream through client-node's `Exec`: output delivered to callbacks as it arrives, stdin as a
 * stream with backpressure on the socket, the exit code from the status channel's `Status` (`Success`, or
 * `NonZeroExitCode` with an `ExitCode` cause), and an error when the stream closes without a status.
 */
import { PassThrough, Writable } from "node:stream";
import type { Exec, V1Status } from "@kubernetes/client-node";

/** Socket bytes buffered above which `write` waits. */
const STDIN_HIGH_WATER_BYTES = 1024 * 1024;

/** A running exec. */
export interface PodExec {
  /** The negotiated subprotocol (`v5.channel.k8s.io` can half-close stdin; older ones cannot). */
  readonly protocol: string;
  /** Resolves with the exit code once the status arrived and the stream closed; rejects when it closed without a status. */
  readonly exitCode: Promise<number>;
  /** Writes stdin bytes; resolves once the socket's buffer is below its high-water mark. */
  write(data: Uint8Array): Promise<void>;
  /** Half-closes stdin (`v5.channel.k8s.io` only). */
  closeStdin(): void;
  /** Closes the stream (the process runs on: Kubernetes does not end it with the stream). */
  close(): void;
}

/** The exit code a status-channel message reports, or undefined when it reports none (a failure that is not an exit). */
export function exitCodeOfStatus(status: V1Status | undefined): number | undefined {
  if (!status) return undefined;
  if (status.status === "Success") return 0;
  if (status.reason === "NonZeroExitCode") {
    const cause = status.details?.causes?.find((candidate) => candidate.reason === "ExitCode");
    const code = Number(cause?.message);
    if (Number.isInteger(code) && code >= 0) return code;
  }
  return undefined;
}

function sink(onChunk: (chunk: Uint8Array) => void): Writable {
  return new Writable({
    write(chunk: Buffer, _encoding, callback) {
      onChunk(new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength));
      callback();
    },
  });
}

/** Opens an exec of `command` (argv) in the sandbox container. */
export async function openPodExec(options: {
  exec: Exec;
  namespace: string;
  pod: string;
  container: string;
  command: string[];
  onStdout: (chunk: Uint8Array) => void;
  onStderr: (chunk: Uint8Array) => void;
  /** Whether the process gets stdin (default true). Without it nothing is sent, and nothing has to be closed: on an API server without v5, closing stdin would end the exec. */
  stdin?: boolean;
}): Promise<PodExec> {
  const withStdin = options.stdin ?? true;
  const stdin = new PassThrough();
  let status: V1Status | undefined;
  const socket = await options.exec.exec(
    options.namespace,
    options.pod,
    options.container,
    options.command,
    sink(options.onStdout),
    sink(options.onStderr),
    withStdin ? stdin : null,
    false,
    (received) => {
      status = received;
    },
  );
  const exitCode = new Promise<number>((resolve, reject) => {
    socket.on("close", () => {
      stdin.destroy();
      const code = exitCodeOfStatus(status);
      if (code !== undefined) resolve(code);
      else
        reject(
          new Error(
            status
              ? `the exec failed: ${status.message ?? status.reason ?? JSON.stringify(status)}`
              : "the exec stream closed without an exit status",
          ),
        );
    });
  });
  socket.on("error", () => {});
  return {
    protocol: socket.protocol,
    exitCode,
    write: async (data) => {
      if (!withStdin) throw new Error("this exec has no stdin");
      if (stdin.writableEnded || socket.readyState !== socket.OPEN) throw new Error("stdin is closed");
      stdin.write(Buffer.from(data.buffer, data.byteOffset, data.byteLength));
      while (socket.readyState === socket.OPEN && socket.bufferedAmount > STDIN_HIGH_WATER_BYTES) {
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
    },
    closeStdin: () => {
      if (!stdin.writableEnded) stdin.end();
    },
    close: () => socket.close(),
  };
}
