/**
 * Thin helpers over Docker exec: start a command in a container with its
 * stdout/stderr demultiplexed into callbacks (no buffering of whole outputs),
 * and learn the exit code from the exec inspect rather than from end of stream.
 */
import type Docker from "dockerode";
import type { Duplex } from "node:stream";

/** How to run a command inside a container. */
export interface ExecOptions {
  command: string[];
  user?: string;
  workingDirectory?: string;
  environment?: Record<string, string>;
  attachStdin?: boolean;
  /**
   * Start polling the exec inspect for the exit code right away (default true). `false` for
   * long-lived processes that learn of their end from the output stream: polling then only
   * starts if `exitCode` is read, so they cost no inspect calls while they run.
   */
  pollExitCode?: boolean;
  /**
   * Run on a pseudo-terminal Docker allocates (`Tty: true`): its output is one raw stream (delivered to `onStdout`),
   * stdin is the terminal's input, and `resize` sets its size. Default false (separate stdout and stderr).
   */
  tty?: boolean;
}

/** A started exec whose output is delivered through callbacks. */
export interface RunningExec {
  /** The hijacked connection; write to it for stdin when attached. */
  readonly connection: Duplex;
  /** Resolves with the exit code once Docker reports the exec as not running (polling starts at once unless `pollExitCode` is false, then on first access). */
  readonly exitCode: Promise<number>;
  /** Resolves when the output stream ended (may happen after the exit when a child holds stdout). */
  readonly outputEnded: Promise<void>;
  /** Stops reading output (use when the process ended but a background child still holds the pipe). */
  detach(): void;
  /** Pauses the output stream (backpressure). */
  pause(): void;
  /** Resumes the output stream. */
  resume(): void;
  /** Half-closes stdin (EOF for the process). */
  closeStdin(): void;
  /** Sets the size of the exec's pseudo-terminal (only for `tty` execs). */
  resize(size: { cols: number; rows: number }): Promise<void>;
  /** Resolves once the output ended, or nothing arrived for `quietMilliseconds` of unpaused time, or after `capMilliseconds` of unpaused waiting. */
  waitForOutputToSettle(quietMilliseconds: number, capMilliseconds: number): Promise<void>;
}

/** Callbacks receiving demultiplexed output chunks. */
export interface ExecOutputHandlers {
  onStdout(chunk: Buffer): void;
  onStderr(chunk: Buffer): void;
}

const sleep = (milliseconds: number) => new Promise((resolve) => setTimeout(resolve, milliseconds));

/** Formats an environment map as Docker's KEY=VALUE list. */
export function toEnvironmentList(environment: Record<string, string> | undefined): string[] {
  return Object.entries(environment ?? {}).map(([key, value]) => `${key}=${value}`);
}

/** Starts a command in the container, streaming its output to the handlers. */
export async function startExec(container: Docker.Container, options: ExecOptions, handlers: ExecOutputHandlers): Promise<RunningExec> {
  const exec = await container.exec({
    Cmd: options.command,
    User: options.user,
    WorkingDir: options.workingDirectory,
    Env: toEnvironmentList(options.environment),
    AttachStdin: options.attachStdin ?? false,
    AttachStdout: true,
    AttachStderr: true,
    Tty: options.tty ?? false,
  });
  const connection = (await exec.start({ hijack: true, stdin: options.attachStdin ?? false, Tty: options.tty ?? false })) as unknown as Duplex;

  // Docker multiplexes stdout/stderr with an 8-byte header: [stream, 0, 0, 0, size(uint32 BE)].
  let pending: Buffer = Buffer.alloc(0);
  let receivedBytes = 0;
  let paused = false;
  connection.on("data", (chunk: Buffer) => {
    receivedBytes += chunk.length;
    // A terminal's output is not multiplexed: every byte is the terminal's.
    if (options.tty) {
      handlers.onStdout(chunk);
      return;
    }
    pending = pending.length === 0 ? chunk : Buffer.concat([pending, chunk]);
    while (pending.length >= 8) {
      const size = pending.readUInt32BE(4);
      if (pending.length < 8 + size) break;
      const streamType = pending[0];
      const payload = pending.subarray(8, 8 + size);
      pending = pending.subarray(8 + size);
      if (streamType === 2) handlers.onStderr(payload);
      else handlers.onStdout(payload);
    }
  });

  let resolveOutputEnded!: () => void;
  const outputEnded = new Promise<void>((resolve) => (resolveOutputEnded = resolve));
  let outputDone = false;
  const markEnded = () => {
    outputDone = true;
    resolveOutputEnded();
  };
  connection.on("end", markEnded);
  connection.on("close", markEnded);
  connection.on("error", markEnded);

  let exitCode: Promise<number> | undefined;
  const pollExitCode = async (): Promise<number> => {
    let interval = 10;
    for (;;) {
      let information: Docker.ExecInspectInfo;
      try {
        information = await exec.inspect();
      } catch {
        // The container is gone: the process is gone with it.
        return 137;
      }
      if (!information.Running && information.ExitCode !== null && information.ExitCode !== undefined) {
        return information.ExitCode;
      }
      await Promise.race([sleep(interval), outputDone ? sleep(5) : outputEnded]);
      interval = Math.min(interval * 2, 200);
    }
  };
  if (options.pollExitCode !== false) exitCode = pollExitCode();

  return {
    connection,
    get exitCode() {
      exitCode ??= pollExitCode();
      return exitCode;
    },
    outputEnded,
    detach: () => {
      connection.removeAllListeners("data");
      connection.destroy();
    },
    pause: () => {
      paused = true;
      connection.pause();
    },
    resume: () => {
      paused = false;
      connection.resume();
    },
    waitForOutputToSettle: async (quietMilliseconds, capMilliseconds) => {
      let activeMilliseconds = 0;
      let quietFor = 0;
      const step = 25;
      while (!outputDone) {
        const before = receivedBytes;
        await Promise.race([sleep(step), outputEnded]);
        // Let pending socket reads run before judging (timers can fire right after a long synchronous stretch).
        await new Promise((resolve) => setImmediate(resolve));
        await new Promise((resolve) => setImmediate(resolve));
        // Output held back by backpressure is still owed to the client: keep waiting while paused.
        if (paused) continue;
        activeMilliseconds += step;
        quietFor = receivedBytes === before ? quietFor + step : 0;
        if (quietFor >= quietMilliseconds || activeMilliseconds >= capMilliseconds) return;
      }
    },
    closeStdin: () => {
      if (!connection.writableEnded) connection.end();
    },
    resize: async (size) => {
      await exec.resize({ w: size.cols, h: size.rows });
    },
  };
}

/** Result of a command whose output was collected in memory. */
export interface CollectedExec {
  exitCode: number;
  stdout: Buffer;
  stderr: Buffer;
}

/** Runs a short command to completion and collects its (small) output. */
export async function runExec(container: Docker.Container, options: ExecOptions & { stdinData?: Buffer }): Promise<CollectedExec> {
  const stdout: Buffer[] = [];
  const stderr: Buffer[] = [];
  const running = await startExec(
    container,
    { ...options, attachStdin: options.stdinData !== undefined },
    { onStdout: (chunk) => stdout.push(Buffer.from(chunk)), onStderr: (chunk) => stderr.push(Buffer.from(chunk)) },
  );
  if (options.stdinData !== undefined) {
    running.connection.write(options.stdinData);
    running.closeStdin();
  }
  const exitCode = await running.exitCode;
  await Promise.race([running.outputEnded, sleep(200)]);
  running.detach();
  return { exitCode, stdout: Buffer.concat(stdout), stderr: Buffer.concat(stderr) };
}
