import type { Duplex, Readable } from "node:stream";
import type Docker from "dockerode";
import { waitForExitCode } from "./exec-exit-code.js";
import { StreamDemuxer } from "./stream-demuxer.js";

/** Bytes of file data held in host memory ahead of the reader before the exec's socket is paused. */
const READ_AHEAD_BYTES = 1024 * 1024;
/** Stderr kept from a file exec (for messages). */
const STDERR_LIMIT_BYTES = 8192;

/** How an exec that produces a file's bytes began: either bytes are coming, or it ended first. */
export type ExecReadStart =
  | { readonly kind: "streaming"; readonly body: ReadableStream<Uint8Array> }
  | { readonly kind: "ended"; readonly exitCode: number; readonly stderr: string };

/**
 * Runs a program whose stdout is a file's bytes. Resolves once the first byte arrives (a stream with bounded
 * read-ahead, whose end checks the exit code) or once the program ended without output (its exit code and
 * stderr, so refusals such as "not found" become typed errors before any stream is handed out).
 */
export async function execRead(
  container: Docker.Container,
  argv: readonly string[],
  options: { user: string; env?: readonly string[]; signal?: AbortSignal },
): Promise<ExecReadStart> {
  const exec = await container.exec({
    Cmd: [...argv],
    AttachStdout: true,
    AttachStderr: true,
    Tty: false,
    User: options.user,
    Env: options.env ? [...options.env] : undefined,
    Privileged: false,
  });
  const socket = (await exec.start({ hijack: false, stdin: false, Tty: false })) as Readable;
  const pending: Uint8Array[] = [];
  let pendingBytes = 0;
  let stderr = "";
  let ended = false;
  let failure: unknown;
  let wake: (() => void) | undefined;
  let started: ((start: ExecReadStart) => void) | undefined;
  let startFailed: ((error: unknown) => void) | undefined;
  let sawOutput = false;
  const notify = () => {
    const waiting = wake;
    wake = undefined;
    waiting?.();
  };
  const demuxer = new StreamDemuxer(
    (chunk) => {
      if (chunk.byteLength === 0) return;
      pending.push(Buffer.from(chunk));
      pendingBytes += chunk.byteLength;
      if (pendingBytes >= READ_AHEAD_BYTES) socket.pause();
      if (!sawOutput) {
        sawOutput = true;
        started?.({ kind: "streaming", body });
      }
      notify();
    },
    (chunk) => {
      if (stderr.length < STDERR_LIMIT_BYTES)
        stderr += Buffer.from(chunk)
          .toString("utf8")
          .slice(0, STDERR_LIMIT_BYTES - stderr.length);
    },
  );
  let exitChecked = false;
  const finish = async () => {
    if (ended) return;
    ended = true;
    try {
      const exitCode = await waitForExitCode(exec, "the file operation");
      if (!sawOutput) {
        started?.({ kind: "ended", exitCode, stderr });
      } else if (exitCode !== 0) {
        failure ??= new Error(`the file read ended with exit code ${exitCode}${stderr ? `: ${stderr.trim()}` : ""}`);
      }
    } catch (error) {
      if (!sawOutput) startFailed?.(error);
      failure ??= error;
    }
    exitChecked = true;
    notify();
  };
  const abort = () => {
    socket.destroy();
    failure ??= options.signal?.reason ?? new Error("aborted");
    if (!sawOutput) startFailed?.(failure);
    notify();
  };
  options.signal?.addEventListener("abort", abort, { once: true });
  const body: ReadableStream<Uint8Array> = new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        for (;;) {
          if (pending.length > 0) {
            const chunk = pending.shift()!;
            pendingBytes -= chunk.byteLength;
            if (pendingBytes < READ_AHEAD_BYTES) socket.resume();
            controller.enqueue(chunk);
            return;
          }
          if (failure) {
            options.signal?.removeEventListener("abort", abort);
            controller.error(failure);
            return;
          }
          if (exitChecked) {
            options.signal?.removeEventListener("abort", abort);
            controller.close();
            return;
          }
          await new Promise<void>((resolve) => (wake = resolve));
        }
      },
      cancel() {
        options.signal?.removeEventListener("abort", abort);
        socket.destroy();
      },
    },
    { highWaterMark: 0 },
  );
  return await new Promise<ExecReadStart>((resolve, reject) => {
    started = resolve;
    startFailed = reject;
    socket.on("data", (chunk: Buffer) => demuxer.push(chunk));
    socket.once("end", () => void finish());
    socket.once("close", () => void finish());
    socket.once("error", (error) => {
      failure ??= error;
      if (!sawOutput) reject(error);
      notify();
    });
  });
}

/**
 * Runs a program with `data` on its stdin (with backpressure) and waits for it to exit. The program's stdout is
 * ignored; stderr is kept (up to 8 KiB) for messages.
 */
export async function execWrite(
  container: Docker.Container,
  argv: readonly string[],
  data: ReadableStream<Uint8Array>,
  options: { user: string; env?: readonly string[]; signal?: AbortSignal },
): Promise<{ exitCode: number; stderr: string }> {
  const exec = await container.exec({
    Cmd: [...argv],
    AttachStdin: true,
    AttachStdout: true,
    AttachStderr: true,
    Tty: false,
    User: options.user,
    Env: options.env ? [...options.env] : undefined,
    Privileged: false,
  });
  const socket = (await exec.start({ hijack: true, stdin: true, Tty: false })) as Duplex;
  let stderr = "";
  const demuxer = new StreamDemuxer(
    () => {},
    (chunk) => {
      if (stderr.length < STDERR_LIMIT_BYTES)
        stderr += Buffer.from(chunk)
          .toString("utf8")
          .slice(0, STDERR_LIMIT_BYTES - stderr.length);
    },
  );
  let closed = false;
  const done = new Promise<void>((resolve) => {
    socket.on("data", (chunk: Buffer) => demuxer.push(chunk));
    socket.once("end", () => {
      closed = true;
      resolve();
    });
    socket.once("close", () => {
      closed = true;
      resolve();
    });
    socket.once("error", () => {
      closed = true;
      resolve();
    });
  });
  const reader = data.getReader();
  const abort = () => socket.destroy();
  options.signal?.addEventListener("abort", abort, { once: true });
  try {
    for (;;) {
      if (closed) break;
      const next = await reader.read();
      if (next.done) break;
      const ok = socket.write(next.value);
      if (!ok && !closed) await Promise.race([new Promise((resolve) => socket.once("drain", resolve)), done]);
    }
    if (!closed) socket.end();
  } catch (error) {
    socket.destroy();
    await reader.cancel().catch(() => {});
    await done;
    throw error;
  } finally {
    options.signal?.removeEventListener("abort", abort);
  }
  if (closed) await reader.cancel().catch(() => {});
  await done;
  if (options.signal?.aborted) throw options.signal.reason ?? new Error("aborted");
  return { exitCode: await waitForExitCode(exec, "the file operation"), stderr };
}
