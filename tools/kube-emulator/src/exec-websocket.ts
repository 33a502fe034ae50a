/**
 * `pods/exec` over WebSocket, as the API server serves it: subprotocol `v5.channel.k8s.io` (or `v4.channel.k8s.io`
 * when v5 is switched off or not offered), every binary message one channel byte then the payload (0 stdin, 1 stdout,
 * 2 stderr, 3 status, 4 resize, 255 close), the exit status as a JSON `Status` on channel 3, then the close. The
 * command runs as a Docker exec in the Pod's container, with the container's user.
 */
import type Docker from "dockerode";
import type { WebSocket } from "ws";
import { startExec, type RunningExec } from "@sbx/emulator-kit";
import { execExitStatus } from "./api-status.js";

/** Channel numbers of the exec subprotocols. */
export const CHANNEL = { stdin: 0, stdout: 1, stderr: 2, status: 3, resize: 4, close: 255 } as const;

/** The largest output frame the emulator sends, in bytes. */
const FRAME_LIMIT_BYTES = 256 * 1024;

/** Buffered bytes on the socket above which the emulator stops reading the command's output. */
const HIGH_WATER_BYTES = 4 * 1024 * 1024;

/** Chooses the subprotocol the emulator answers with, or undefined when none it speaks was offered. */
export function chooseExecProtocol(offered: ReadonlySet<string>, allowV5: boolean): string | undefined {
  if (allowV5 && offered.has("v5.channel.k8s.io")) return "v5.channel.k8s.io";
  if (offered.has("v4.channel.k8s.io")) return "v4.channel.k8s.io";
  return undefined;
}

function framed(channel: number, payload: Uint8Array): Buffer {
  const frame = Buffer.allocUnsafe(payload.length + 1);
  frame[0] = channel;
  frame.set(payload, 1);
  return frame;
}

/** Runs one exec for an accepted socket; resolves when the socket is closed. Counts requests through `onCommand`. */
export async function serveExec(
  socket: WebSocket,
  options: {
    container: Docker.Container;
    command: string[];
    stdin: boolean;
    /** Whether the Pod still has this container (false once it is deleted, past its deadline, or its node is lost). */
    podAlive: () => boolean;
  },
): Promise<void> {
  let running: RunningExec;
  const pendingInput: Buffer[] = [];
  let stdinClosedEarly = false;
  let execStarted = false;
  socket.on("message", (data: Buffer, isBinary: boolean) => {
    if (!isBinary || data.length === 0) return;
    const channel = data[0];
    if (channel === CHANNEL.stdin) {
      const payload = data.subarray(1);
      if (!execStarted) pendingInput.push(Buffer.from(payload));
      else if (options.stdin && !running.connection.write(payload)) {
        socket.pause();
        running.connection.once("drain", () => socket.resume());
      }
    } else if (channel === CHANNEL.close && data[1] === CHANNEL.stdin) {
      if (!execStarted) stdinClosedEarly = true;
      else running.closeStdin();
    }
  });
  const socketClosed = new Promise<void>((resolve) => socket.once("close", () => resolve()));
  socket.on("error", () => {});
  // Docker's stream arrives in small pieces; consecutive pieces of one channel are sent as one frame (up to
  // FRAME_LIMIT_BYTES), flushed at the next turn of the event loop, so order across channels is kept.
  let pendingChannel = -1;
  let pendingChunks: Buffer[] = [];
  let pendingBytes = 0;
  let flushScheduled = false;
  const flush = () => {
    flushScheduled = false;
    if (pendingBytes === 0 && pendingChunks.length === 0) return;
    const payload = Buffer.concat(pendingChunks);
    const channel = pendingChannel;
    pendingChunks = [];
    pendingBytes = 0;
    if (socket.readyState === socket.OPEN) socket.send(framed(channel, payload));
  };
  const send = (channel: number, chunk: Buffer) => {
    if (socket.readyState !== socket.OPEN) return;
    if (channel !== pendingChannel || pendingBytes + chunk.length > FRAME_LIMIT_BYTES) flush();
    pendingChannel = channel;
    pendingChunks.push(Buffer.from(chunk));
    pendingBytes += chunk.length;
    if (!flushScheduled) {
      flushScheduled = true;
      setImmediate(flush);
    }
    if (socket.bufferedAmount > HIGH_WATER_BYTES) {
      running.pause();
      const wait = () => {
        if (socket.readyState !== socket.OPEN || socket.bufferedAmount < HIGH_WATER_BYTES / 2) running.resume();
        else setTimeout(wait, 5);
      };
      setTimeout(wait, 5);
    }
  };
  try {
    running = await startExec(
      options.container,
      { command: options.command, attachStdin: options.stdin },
      { onStdout: (chunk) => send(CHANNEL.stdout, chunk), onStderr: (chunk) => send(CHANNEL.stderr, chunk) },
    );
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    if (socket.readyState === socket.OPEN) {
      socket.send(framed(CHANNEL.status, Buffer.from(JSON.stringify({ metadata: {}, status: "Failure", message, reason: "InternalError" }))));
      socket.close(1000);
    }
    return;
  }
  execStarted = true;
  if (options.stdin) {
    for (const chunk of pendingInput) running.connection.write(chunk);
    if (stdinClosedEarly) running.closeStdin();
  }
  // A client that goes away does not end the process (as with a real kubelet): the process runs on.
  const ended = await Promise.race([running.exitCode.then((code) => ({ code })), socketClosed.then(() => undefined)]);
  if (ended === undefined) {
    running.detach();
    return;
  }
  // Output a background child still holds is not waited for beyond a short settle, as the kubelet's stream copy ends.
  await running.waitForOutputToSettle(50, 2_000);
  running.detach();
  flush();
  // The container is gone (Pod deleted, deadline passed, node lost): the stream breaks without an exit status.
  const containerRunning = await options.container.inspect().then(
    (information) => information.State.Running,
    () => false,
  );
  if (!options.podAlive() || !containerRunning) {
    socket.terminate();
    return;
  }
  if (socket.readyState === socket.OPEN) {
    socket.send(framed(CHANNEL.status, Buffer.from(JSON.stringify(execExitStatus(ended.code, options.command)))));
    socket.close(1000);
  }
  await socketClosed;
}
