import { randomBytes } from "node:crypto";
import type { Duplex, Readable } from "node:stream";
import type { SpawnedProcess, SpawnRequest } from "@sbx/core";
import type Docker from "dockerode";
import { StreamDemuxer } from "./stream-demuxer.js";

/** Environment variable every process of one command inherits, so the kill can find double-forked children. */
export const COMMAND_MARKER_VARIABLE = "SBX_COMMAND_ID";

/**
 * Runs the command in a new session (`setsid`, when the image has it) so the whole tree has one process group,
 * records that group id under /tmp, and exits with the command's status as soon as the command itself exits,
 * even while background children still hold stdout. Arguments: $1 the command line, $2 the command id, $3 the
 * working directory (a missing one is sh's own error on stderr and exit 126, not an engine error on stdout).
 */
export const COMMAND_WRAPPER = [
  'cd -- "$3" || exit 126',
  "exec 3<&0",
  'if command -v setsid >/dev/null 2>&1; then setsid sh -c "$1" <&3 3<&- & else sh -c "$1" <&3 3<&- & fi',
  "exec 3<&-",
  "c=$!",
  'echo "$c" > "/tmp/.sbx-$2.pid" 2>/dev/null',
  'wait "$c"; s=$?',
  'rm -f "/tmp/.sbx-$2.pid" 2>/dev/null',
  'exit "$s"',
].join("\n");

/**
 * Kills a command's whole tree: its process group (from the pid file), then every process whose environment
 * carries the command's marker (children that called setsid again or double-forked), repeated until none is left.
 * Argument: $1 the command id.
 */
export const KILL_SCRIPT = [
  'p=$(cat "/tmp/.sbx-$1.pid" 2>/dev/null)',
  // dash's kill rejects "--" before a negative pid ("Illegal number"), so the plain form is tried too.
  '[ -n "$p" ] && { kill -9 -- "-$p" 2>/dev/null || kill -9 "-$p" 2>/dev/null; }',
  "i=0",
  "while [ $i -lt 50 ]; do",
  "  found=",
  "  for d in /proc/[0-9]*; do",
  '    q=${d#/proc/}',
  '    [ "$q" = "$$" ] && continue',
  `    if grep -qa "${COMMAND_MARKER_VARIABLE}=$1" "$d/environ" 2>/dev/null; then kill -9 "$q" 2>/dev/null && found=1; fi`,
  "  done",
  '  [ -z "$found" ] && break',
  "  i=$((i+1))",
  "done",
  'rm -f "/tmp/.sbx-$1.pid" 2>/dev/null',
  "exit 0",
].join("\n");

const delay = (milliseconds: number) => new Promise((resolve) => setTimeout(resolve, milliseconds));

/** Reads the exit code of a finished exec, retrying briefly while the engine still reports it running. */
async function exitCodeOf(exec: Docker.Exec): Promise<{ running: boolean; exitCode: number | null }> {
  const info = await exec.inspect();
  return { running: info.Running, exitCode: info.ExitCode };
}

async function waitForExitCode(exec: Docker.Exec): Promise<number> {
  for (let attempt = 0; ; attempt++) {
    const { running, exitCode } = await exitCodeOf(exec);
    if (!running && exitCode !== null && exitCode !== undefined) return exitCode;
    await delay(attempt < 10 ? 5 : 50);
    if (attempt > 400) throw new Error("the engine kept reporting the command as running after its output ended");
  }
}

/** What the driver passes to `spawnCommand`. */
export interface ExecContext {
  readonly container: Docker.Container;
  /** `uid:gid` the command runs as. */
  readonly user: string;
  /** Called when a command exits with 137, to tell an out-of-memory kill from another SIGKILL. */
  readonly checkOutOfMemory: () => Promise<boolean | null>;
}

/**
 * Starts one command through a single exec, with stdout and stderr demultiplexed and streamed in order.
 * The exit code comes from exec inspect once the stream ends; if a background child keeps the stream open,
 * inspect is polled and the wait ends when the command itself has exited.
 */
export async function spawnCommand(context: ExecContext, request: SpawnRequest): Promise<SpawnedProcess> {
  const commandId = randomBytes(12).toString("hex");
  const environment = Object.entries(request.env).map(([name, value]) => `${name}=${value}`);
  environment.push(`${COMMAND_MARKER_VARIABLE}=${commandId}`);
  const exec = await context.container.exec({
    Cmd: ["sh", "-c", COMMAND_WRAPPER, "sbx", request.command, commandId, request.cwd],
    AttachStdin: request.stdin,
    AttachStdout: true,
    AttachStderr: true,
    Tty: false,
    Env: environment,
    User: context.user,
    Privileged: false,
  });
  const stream = (await exec.start({ hijack: request.stdin, stdin: request.stdin, Tty: false })) as Duplex & Readable;
  const demuxer = new StreamDemuxer(request.onStdout, request.onStderr);
  let killed: Promise<void> | undefined;

  const exit = new Promise<{ exitCode: number; outOfMemoryKilled?: boolean | null }>((resolve, reject) => {
    let settled = false;
    let pollTimer: NodeJS.Timeout | undefined;
    const finish = async () => {
      if (settled) return;
      settled = true;
      if (pollTimer) clearTimeout(pollTimer);
      try {
        const exitCode = await waitForExitCode(exec);
        const outOfMemoryKilled = exitCode === 137 ? await context.checkOutOfMemory().catch(() => null) : false;
        resolve({ exitCode, outOfMemoryKilled });
      } catch (error) {
        reject(error);
      }
    };
    stream.on("data", (chunk: Buffer) => demuxer.push(chunk));
    stream.once("end", () => void finish());
    stream.once("close", () => void finish());
    stream.once("error", (error) => {
      if (settled) return;
      settled = true;
      if (pollTimer) clearTimeout(pollTimer);
      reject(error);
    });
    // A background child may hold stdout open after the command exits: poll exec inspect, slowly, and stop
    // waiting for end-of-stream once the command itself is gone (after a short grace for trailing bytes).
    let interval = 200;
    const poll = async () => {
      if (settled) return;
      try {
        const { running } = await exitCodeOf(exec);
        if (!running && !settled) {
          await delay(50);
          stream.destroy();
          void finish();
          return;
        }
      } catch {
        // The next poll or the stream's end decides.
      }
      interval = Math.min(interval * 2, 1000);
      if (!settled) pollTimer = setTimeout(() => void poll(), interval);
    };
    pollTimer = setTimeout(() => void poll(), interval);
  });
  exit.catch(() => {});

  return {
    pid: exec.id,
    exit,
    async writeStdin(data) {
      await new Promise<void>((resolve, reject) => stream.write(data, (error) => (error ? reject(error) : resolve())));
    },
    async closeStdin() {
      await new Promise<void>((resolve) => {
        if (stream.writableEnded) resolve();
        else stream.end(() => resolve());
      });
    },
    kill() {
      killed ??= runArgv(context.container, ["sh", "-c", KILL_SCRIPT, "sbx-kill", commandId], { user: context.user }).then(() => undefined);
      return killed;
    },
  };
}

/** The outcome of a small helper exec. */
export interface ArgvResult {
  readonly exitCode: number;
  readonly stdout: Buffer;
  readonly stderr: string;
}

/**
 * Runs a program with an argument vector (never a shell string built from caller data) and collects its output,
 * up to `maxOutputBytes` (default 64 MiB).
 */
export async function runArgv(container: Docker.Container, argv: readonly string[], options: { user: string; cwd?: string; maxOutputBytes?: number }): Promise<ArgvResult> {
  const exec = await container.exec({ Cmd: [...argv], AttachStdout: true, AttachStderr: true, Tty: false, User: options.user, WorkingDir: options.cwd, Privileged: false });
  const stream = (await exec.start({ hijack: false, stdin: false, Tty: false })) as Readable;
  const limit = options.maxOutputBytes ?? 64 * 1024 * 1024;
  const stdout: Buffer[] = [];
  const stderr: Buffer[] = [];
  let kept = 0;
  const keep = (target: Buffer[]) => (chunk: Uint8Array) => {
    if (kept >= limit) return;
    const slice = Buffer.from(chunk.subarray(0, Math.min(chunk.byteLength, limit - kept)));
    kept += slice.byteLength;
    target.push(slice);
  };
  const demuxer = new StreamDemuxer(keep(stdout), keep(stderr));
  await new Promise<void>((resolve, reject) => {
    stream.on("data", (chunk: Buffer) => demuxer.push(chunk));
    stream.once("end", resolve);
    stream.once("close", resolve);
    stream.once("error", reject);
  });
  const exitCode = await waitForExitCode(exec);
  return { exitCode, stdout: Buffer.concat(stdout), stderr: Buffer.concat(stderr).toString("utf8") };
}
