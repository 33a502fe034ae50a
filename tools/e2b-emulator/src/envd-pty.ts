/**
 * envd's PTY mode of `process.Process/Start` (`pty: {size: {cols, rows}}`), as the SDK's `sandbox.pty` uses it: the
 * process runs on a real pseudo-terminal inside the sandbox container (a `docker exec` with `Tty`, which makes the
 * process a session leader with the terminal as its controlling terminal, as envd's `pty.StartWithSize` does), its
 * output is one stream sent as `data.pty`, its input arrives through `SendInput` with `input.pty`, and `Update` with
 * `pty.size` resizes it. The Docker Engine here (API 1.41) cannot set an exec's size at creation, so the wrapper sets
 * it with `stty` before the command runs: the command never sees another size.
 */
import type Docker from "dockerode";
import { startExec, type RunningExec } from "@sbx/emulator-kit";
import { ConnectProtocolError } from "./connect-protocol.js";

/** A terminal size in character cells. */
export interface PtySize {
  cols: number;
  rows: number;
}

/** envd's `PTY` message as JSON: `{size: {cols, rows}}`. */
export interface PtyRequest {
  size?: { cols?: number; rows?: number };
}

/** The largest side envd's uint32 fields would take that a terminal can use (the kernel keeps a 16-bit size). */
const LARGEST_SIDE = 65_535;

/** Reads the size of a `PTY` message, refusing what a terminal cannot have. */
export function ptySize(request: PtyRequest): PtySize {
  const cols = Number(request.size?.cols ?? 0);
  const rows = Number(request.size?.rows ?? 0);
  const valid = (side: number) => Number.isInteger(side) && side > 0 && side <= LARGEST_SIDE;
  if (!valid(cols) || !valid(rows)) throw new ConnectProtocolError("invalid_argument", `invalid PTY size ${cols}x${rows}`);
  return { cols, rows };
}

/** What starting a process on a terminal needs. */
export interface TerminalExecOptions {
  command: string[];
  user: string;
  workingDirectory: string;
  environment: Record<string, string>;
  size: PtySize;
  /** Each chunk of the terminal's output, in order. */
  onOutput(chunk: Buffer): void;
  /** Called once with the exit code, after the output was delivered. */
  onExit(exitCode: number): void;
}

/** How long the output may still flow after the exit before it is cut, in milliseconds, when nothing else holds the terminal. */
const OUTPUT_DRAIN_CAP_MS = 5_000;

/**
 * Starts `command` on a pseudo-terminal of the size asked for; resolves with the exec and the process id once the
 * wrapper printed it (the wrapper's pid is the command's: it `exec`s it). Rejects with a Connect error when Docker
 * could not start it (a missing working directory, an unknown user).
 */
export async function startTerminalExec(container: Docker.Container, options: TerminalExecOptions): Promise<{ running: RunningExec; pid: number }> {
  let firstLine: Buffer = Buffer.alloc(0);
  let pid: number | undefined;
  let resolvePid!: (pid: number) => void;
  let rejectPid!: (error: Error) => void;
  const pidReady = new Promise<number>((resolve, reject) => {
    resolvePid = resolve;
    rejectPid = reject;
  });
  const running = await startExec(
    container,
    {
      command: [
        "/bin/sh",
        "-c",
        'stty cols "$1" rows "$2" 2>/dev/null; echo "$$"; shift 2; exec "$@"',
        "e2b-pty",
        String(options.size.cols),
        String(options.size.rows),
        ...options.command,
      ],
      user: options.user,
      workingDirectory: options.workingDirectory,
      environment: options.environment,
      attachStdin: true,
      tty: true,
    },
    {
      onStdout: (chunk) => {
        if (pid !== undefined) {
          options.onOutput(chunk);
          return;
        }
        firstLine = Buffer.concat([firstLine, chunk]);
        const newline = firstLine.indexOf(10);
        if (newline < 0) return;
        const text = firstLine.subarray(0, newline).toString("utf8").trim();
        if (!/^\d+$/.test(text)) return;
        pid = Number(text);
        resolvePid(pid);
        const rest = firstLine.subarray(newline + 1);
        if (rest.length > 0) options.onOutput(rest);
      },
      onStderr: (chunk) => options.onOutput(chunk),
    },
  );
  void running.exitCode.then(async (exitCode) => {
    if (pid === undefined) await Promise.race([running.outputEnded, new Promise((resolve) => setTimeout(resolve, 2_000))]);
    if (pid === undefined) {
      const message = firstLine.toString("utf8").trim();
      const code = /chdir|no such file|unable to find user|no matching entries/i.test(message) ? "invalid_argument" : "internal";
      rejectPid(new ConnectProtocolError(code, `failed to start process (exit ${exitCode}): ${message}`));
      running.detach();
      return;
    }
    // The terminal closes once every process holding it ended; a background child may hold it open for good.
    await running.waitForOutputToSettle(150, OUTPUT_DRAIN_CAP_MS);
    running.detach();
    options.onExit(exitCode);
  });
  return { running, pid: await pidReady };
}
