import { randomBytes } from "node:crypto";
import type { Duplex, Readable } from "node:stream";
import { ProviderError, type SpawnedProcess, type SpawnRequest } from "@sbx/core";
import { COMMAND_WRAPPER, commandExitOutcome, newCommandTag } from "@sbx/core/adapter";
import type Docker from "dockerode";
import { statusCodeOf } from "./map-docker-error.js";
import { startHelperExec, waitForExitCode } from "./helper-exec.js";
import { StreamDemuxer } from "./stream-demuxer.js";

/** Environment variable every process of one command inherits, so the kill can find double-forked children. */
export const COMMAND_MARKER_VARIABLE = "SBX_COMMAND_ID";

// COMMAND_WRAPPER (tag with the loginuid audit tag, run in a new session, exit with the command's own status) is
// core's portable copy (@sbx/core/adapter).

const delay = (milliseconds: number) => new Promise((resolve) => setTimeout(resolve, milliseconds));

/** Longest wait between two exec inspects of a running command (its exit is noticed at most this late when a background child holds its output open). */
const MAX_POLL_INTERVAL_MS = 5000;

/** How long a kill waits for the engine to start an exec's process before it kills anyway (then checks again after). */
const EXEC_START_WAIT_MS = 10_000;

/** How many more verified kills follow when the engine still reports the exec running after one. */
const EXTRA_KILL_ROUNDS = 3;

/** How long after a verified kill the engine may take to report the exec's process ended, per round. */
const EXEC_END_WAIT_MS = 2_000;

/**
 * Resolves once the engine has started the exec's process (a pid, running, or already finished), or after
 * `EXEC_START_WAIT_MS`. The engine answers an exec start's hijacked attach before it starts the process: a kill sent in
 * between scans a container where the command does not exist yet, is "verified", and the command then starts and runs
 * on (a CI run's `first.kill()` left `sleep 600` running and its `wait()` hung).
 */
async function untilExecStarted(exec: Docker.Exec): Promise<void> {
  const deadline = Date.now() + EXEC_START_WAIT_MS;
  for (let attempt = 0; Date.now() < deadline; attempt++) {
    const info = await inspectWithin(exec, deadline);
    if (info === "timed-out") return;
    if (!info || info.Running || info.Pid > 0 || (info.ExitCode !== null && info.ExitCode !== undefined)) return;
    await delay(attempt < 10 ? 10 : 50);
  }
}

/** The exec's inspect, given up at `deadline` ("timed-out": a stalled engine must not hold a kill), or undefined when the engine refused it. */
async function inspectWithin(exec: Docker.Exec, deadline: number): Promise<Docker.ExecInspectInfo | "timed-out" | undefined> {
  try {
    return await exec.inspect({ abortSignal: AbortSignal.timeout(Math.max(1, deadline - Date.now())) });
  } catch (error) {
    return error instanceof Error && (error.name === "AbortError" || error.name === "TimeoutError") ? "timed-out" : undefined;
  }
}

/** Whether the engine reports the exec's process ended within `EXEC_END_WAIT_MS` (an engine error counts as ended: the exec or its container is gone). */
async function execEnds(exec: Docker.Exec): Promise<boolean> {
  const deadline = Date.now() + EXEC_END_WAIT_MS;
  for (;;) {
    const info = await inspectWithin(exec, deadline);
    if (info === "timed-out") return false;
    if (!info || !info.Running) return true;
    if (Date.now() >= deadline) return false;
    await delay(50);
  }
}

/**
 * The kill of one exec: after the engine started its process, the verified kill (`killOnce`); while the engine still
 * reports the exec running afterwards (its process started after the scan), again, up to `EXTRA_KILL_ROUNDS` times.
 * An exec still running after that was not killed: a `ProviderError`, never a kill reported done.
 */
async function killExec(exec: Docker.Exec, killOnce: () => Promise<void>): Promise<void> {
  await untilExecStarted(exec);
  await killOnce();
  for (let round = 0; round < EXTRA_KILL_ROUNDS; round++) {
    if (await execEnds(exec)) return;
    await killOnce();
  }
  if (await execEnds(exec)) return;
  throw new ProviderError({
    backend: "docker",
    retryable: false,
    message: `The engine still reports the command's exec running after ${EXTRA_KILL_ROUNDS + 1} verified kills of its processes; the kill is not verified.`,
  });
}

/** Reads the exit code of a finished exec, retrying briefly while the engine still reports it running. */
async function exitCodeOf(exec: Docker.Exec): Promise<{ running: boolean; exitCode: number | null }> {
  const info = await exec.inspect();
  return { running: info.Running, exitCode: info.ExitCode };
}

/** What the driver passes to `spawnCommand`. */
export interface ExecContext {
  readonly container: Docker.Container;
  /** `uid:gid` the command runs as. */
  readonly user: string;
  /** Called when a command exits with 137: whether the sandbox's OOM kill counter grew (null: unknown). */
  readonly checkOutOfMemory: () => Promise<boolean | null>;
  /**
   * Kills the command's tree by its tag and resolves only once the driver verified nothing of it is left; rejects
   * with a typed error (the sandbox is ended and reported lost when the kill could not be verified).
   */
  readonly killVerified: (tag: string) => Promise<void>;
  /** Resolves with a `SandboxNotFoundError` when the container is gone, else undefined. */
  readonly lostError: (cause?: unknown) => Promise<Error | undefined>;
  /** The driver's unsettled execs: each registers itself until its exit settles, so the driver can end them all. */
  readonly liveExecs: Set<LiveExec>;
}

/** One unsettled command exec, as the driver sees it. */
export interface LiveExec {
  /** The container was removed by sbx: release the exec's stream and timer and settle its exit with 137. */
  end(): void;
}

/** How an exec other than a tagged command starts and is killed (the sbx sandbox agent's own exec: agent-launch.ts). */
export interface ExecLaunch {
  /** The exec's argument vector. */
  readonly argv: readonly string[];
  /** The verified kill of what the exec started. */
  readonly kill: () => Promise<void>;
}

/**
 * Starts one command through a single exec, with stdout and stderr demultiplexed and streamed in order.
 * The exit code comes from exec inspect once the stream ends; if a background child keeps the stream open,
 * inspect is polled and the wait ends when the command itself has exited. By default the command runs in core's
 * command wrapper with a fresh audit tag, killed by the driver's verified tag kill; `launch` replaces both.
 */
export async function spawnCommand(context: ExecContext, request: SpawnRequest, launch?: ExecLaunch): Promise<SpawnedProcess> {
  const commandId = randomBytes(12).toString("hex");
  const tag = newCommandTag();
  const environment = Object.entries(request.env).map(([name, value]) => `${name}=${value}`);
  environment.push(`${COMMAND_MARKER_VARIABLE}=${commandId}`);
  const exec = await context.container.exec({
    Cmd: launch ? [...launch.argv] : ["sh", "-c", COMMAND_WRAPPER, "sbx", request.command, commandId, request.cwd, tag],
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

  let endExec = () => {};
  const live: LiveExec = { end: () => endExec() };
  context.liveExecs.add(live);
  const exit = new Promise<{ exitCode: number; outOfMemoryKilled?: boolean | null }>((resolve, reject) => {
    let settled = false;
    let pollTimer: NodeJS.Timeout | undefined;
    endExec = () => {
      if (settled) return;
      settled = true;
      if (pollTimer) clearTimeout(pollTimer);
      stream.destroy();
      resolve({ exitCode: 137, outOfMemoryKilled: false });
    };
    const finish = async () => {
      if (settled) return;
      settled = true;
      if (pollTimer) clearTimeout(pollTimer);
      try {
        const exitCode = await waitForExitCode(exec);
        // Core's one exit rule: a SIGKILL is checked for the OOM killer, and one nobody explains for a lost container.
        const lostError = () => context.lostError();
        resolve(
          await commandExitOutcome({
            exitCode,
            killRequested: () => killed !== undefined,
            outOfMemoryCounterGrew: context.checkOutOfMemory,
            lostError,
          }),
        );
      } catch (error) {
        reject((await context.lostError(error).catch(() => undefined)) ?? error);
      }
    };
    stream.on("data", (chunk: Buffer) => demuxer.push(chunk));
    stream.once("end", () => void finish());
    stream.once("close", () => void finish());
    stream.once("error", (error) => {
      if (settled) return;
      settled = true;
      if (pollTimer) clearTimeout(pollTimer);
      void context
        .lostError(error)
        .catch(() => undefined)
        .then((lost) => reject(lost ?? error));
    });
    // A background child may hold stdout open after the command exits: poll exec inspect, slowly, and stop
    // waiting for end-of-stream once the command itself is gone (after a short grace for trailing bytes).
    let interval = 200;
    const poll = async () => {
      if (settled) return;
      try {
        const { running, exitCode } = await exitCodeOf(exec);
        // Not running and no exit code: the engine has not started the process yet (it answers the attach first).
        if (!running && exitCode !== null && exitCode !== undefined && !settled) {
          await delay(50);
          stream.destroy();
          void finish();
          return;
        }
      } catch (error) {
        // The exec (or its container) is gone: nothing more will come; the exit code read decides. Otherwise the
        // next poll or the stream's end does (a poll never continues against an exec the engine no longer has).
        if (statusCodeOf(error) === 404) {
          stream.destroy();
          void finish();
          return;
        }
      }
      // Up to 5 s apart: every live command polls, and hundreds of 1 s pollers swamped the engine (adr/0030).
      interval = Math.min(interval * 2, MAX_POLL_INTERVAL_MS);
      if (!settled) pollTimer = setTimeout(() => void poll(), interval);
    };
    pollTimer = setTimeout(() => void poll(), interval);
  });
  exit.catch(() => {});
  void exit.finally(() => context.liveExecs.delete(live)).catch(() => {});

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
      killed ??= killExec(exec, launch ? () => launch.kill() : () => context.killVerified(tag));
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

/** Default cap on what `runArgv` collects from one helper exec (stdout and stderr together). */
export const HELPER_OUTPUT_LIMIT_BYTES = 64 * 1024 * 1024;

/**
 * A helper exec (a file listing, stat, kill script) wrote more than `runArgv` collects: its output would be a short
 * answer passed off as a full one, so the call fails instead (code `SBX_PROVIDER`, not retryable). For a listing,
 * list a smaller directory.
 */
export class HelperOutputTooLargeError extends ProviderError {
  /** The limit that was exceeded, in bytes. */
  readonly limitBytes: number;
  constructor(options: { limitBytes: number; program: string }) {
    super({
      backend: "docker",
      retryable: false,
      message: `The sandbox helper ${JSON.stringify(options.program)} wrote more than ${options.limitBytes} bytes (the ${options.limitBytes / (1024 * 1024)} MiB limit on a helper's output); its output was not used, since a cut one would be incomplete. For a listing, list a smaller directory.`,
    });
    this.name = "HelperOutputTooLargeError";
    this.limitBytes = options.limitBytes;
  }
}

/**
 * Runs a program with an argument vector (never a shell string built from caller data) and collects its output,
 * up to `maxOutputBytes` (default 64 MiB, `HELPER_OUTPUT_LIMIT_BYTES`). Past the limit it rejects with
 * `HelperOutputTooLargeError` once the exec ends (the rest is read and dropped, so memory stays bounded): never a
 * cut output returned as complete.
 */
export async function runArgv(
  container: Docker.Container,
  argv: readonly string[],
  options: { user: string; cwd?: string; env?: readonly string[]; maxOutputBytes?: number },
): Promise<ArgvResult> {
  const { exec, stream } = await startHelperExec(container, argv, options);
  const limit = options.maxOutputBytes ?? HELPER_OUTPUT_LIMIT_BYTES;
  const stdout: Buffer[] = [];
  const stderr: Buffer[] = [];
  let kept = 0;
  let exceeded = false;
  const keep = (target: Buffer[]) => (chunk: Uint8Array) => {
    if (kept + chunk.byteLength > limit) exceeded = true;
    if (exceeded) return;
    kept += chunk.byteLength;
    target.push(Buffer.from(chunk));
  };
  const demuxer = new StreamDemuxer(keep(stdout), keep(stderr));
  await new Promise<void>((resolve, reject) => {
    stream.on("data", (chunk: Buffer) => demuxer.push(chunk));
    stream.once("end", resolve);
    stream.once("close", resolve);
    stream.once("error", reject);
  });
  const exitCode = await waitForExitCode(exec);
  if (exceeded)
    throw new HelperOutputTooLargeError({ limitBytes: limit, program: argv[0] === "sh" && argv[3] !== undefined ? argv[3] : (argv[0] ?? "") });
  return { exitCode, stdout: Buffer.concat(stdout), stderr: Buffer.concat(stderr).toString("utf8") };
}
