import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";

/** How to run the `container` CLI: its path and the environment it gets. */
export interface ContainerCli {
  /** Absolute path (or name on PATH) of the executable. */
  readonly binary: string;
  /** The CLI's whole environment. */
  readonly environment: NodeJS.ProcessEnv;
}

/** What one CLI call printed and how it exited (`exitCode` null when it was killed: timeout or abort). */
export interface CliResult {
  readonly exitCode: number | null;
  readonly stdout: string;
  readonly stderr: string;
  /** True when the call was ended by its timeout or signal rather than exiting by itself. */
  readonly stopped: boolean;
}

/** Most bytes of stdout or stderr kept from one control call; anything above is cut (the JSON then fails to parse). */
const OUTPUT_LIMIT_BYTES = 16 * 1024 * 1024;

/**
 * Runs one CLI control call to completion, bounded: killed at `timeoutMs` or when `signal` aborts (then
 * `stopped: true`). Never throws for a non-zero exit; a CLI that cannot start at all is exit 127 with the reason.
 */
export function runCli(
  cli: ContainerCli,
  args: readonly string[],
  options: { timeoutMs: number; signal?: AbortSignal; input?: string },
): Promise<CliResult> {
  return new Promise((resolve) => {
    let child: ChildProcessWithoutNullStreams;
    try {
      child = spawn(cli.binary, args, { env: cli.environment, stdio: "pipe" });
    } catch (error) {
      resolve({ exitCode: 127, stdout: "", stderr: error instanceof Error ? error.message : String(error), stopped: false });
      return;
    }
    const stdout: Buffer[] = [];
    const stderr: Buffer[] = [];
    let sizes = [0, 0];
    let stopped = false;
    const collect = (into: Buffer[], index: 0 | 1) => (chunk: Buffer) => {
      if (sizes[index]! >= OUTPUT_LIMIT_BYTES) return;
      into.push(chunk);
      sizes = index === 0 ? [sizes[0]! + chunk.length, sizes[1]!] : [sizes[0]!, sizes[1]! + chunk.length];
    };
    child.stdout.on("data", collect(stdout, 0));
    child.stderr.on("data", collect(stderr, 1));
    const stop = () => {
      stopped = true;
      child.kill("SIGKILL");
    };
    const timer = setTimeout(stop, options.timeoutMs);
    options.signal?.addEventListener("abort", stop, { once: true });
    child.on("error", (error) => {
      clearTimeout(timer);
      options.signal?.removeEventListener("abort", stop);
      resolve({ exitCode: 127, stdout: "", stderr: error.message, stopped: false });
    });
    child.on("close", (code) => {
      clearTimeout(timer);
      options.signal?.removeEventListener("abort", stop);
      resolve({
        exitCode: stopped ? null : code,
        stdout: Buffer.concat(stdout).toString("utf8"),
        stderr: Buffer.concat(stderr).toString("utf8"),
        stopped,
      });
    });
    child.stdin.on("error", () => {});
    child.stdin.end(options.input ?? "");
  });
}

/** Starts a CLI call whose streams the caller handles (`container exec`). */
export function startCli(cli: ContainerCli, args: readonly string[]): ChildProcessWithoutNullStreams {
  return spawn(cli.binary, args, { env: cli.environment, stdio: "pipe" });
}
