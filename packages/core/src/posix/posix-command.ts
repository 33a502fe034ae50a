import type { SandboxDriverV1, SpawnedProcess } from "../v1/provider.js";
import { withinTime } from "../limits/deadline.js";
import { concatenateBytes } from "./concatenate-bytes.js";
import { shellScript } from "./shell-quote.js";

/** Stderr kept from a helper command, for error messages. */
const STDERR_LIMIT_BYTES = 8192;

/** The environment every core helper command runs with: a portable PATH, the C locale, the workspace. */
export function helperEnvironment(workspace: string): Record<string, string> {
  return { PATH: DEFAULT_PATH, LC_ALL: "C", SBX_WORKSPACE: workspace };
}

/** The `PATH` core gives every spawn unless the caller passes one. */
export const DEFAULT_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

/** What a helper command ended with. */
export interface PosixCommandResult {
  readonly exitCode: number;
  readonly stdout: Uint8Array;
  readonly stderr: string;
}

/**
 * The command wrapper of core's POSIX helper set: runs `sh -c script name args…` through the driver's own `spawn`
 * (arguments quoted, never interpolated), optionally feeding `stdin`, and collects the output (stdout up to
 * `maxOutputBytes`, stderr up to 8 KiB). Aborting `signal` kills the process and rejects with the signal's reason.
 */
export async function runPosixScript(
  driver: Pick<SandboxDriverV1, "spawn" | "workspace">,
  request: {
    readonly script: string;
    readonly name: string;
    readonly args?: readonly string[];
    readonly stdin?: ReadableStream<Uint8Array>;
    readonly signal?: AbortSignal;
    /** Stdout bytes kept; more fails the call. Default 16 MiB. */
    readonly maxOutputBytes?: number;
  },
): Promise<PosixCommandResult> {
  const limit = request.maxOutputBytes ?? 16 * 1024 * 1024;
  const stdout: Uint8Array[] = [];
  let stdoutBytes = 0;
  let stderr = "";
  const decoder = new TextDecoder();
  let overflow = false;
  request.signal?.throwIfAborted();
  const process: SpawnedProcess = await driver.spawn({
    command: shellScript(request.script, request.name, request.args),
    cwd: driver.workspace,
    env: helperEnvironment(driver.workspace),
    stdin: request.stdin !== undefined,
    onStdout: (chunk) => {
      stdoutBytes += chunk.byteLength;
      if (stdoutBytes > limit) overflow = true;
      else stdout.push(chunk.slice());
    },
    onStderr: (chunk) => {
      if (stderr.length < STDERR_LIMIT_BYTES) stderr += decoder.decode(chunk, { stream: true }).slice(0, STDERR_LIMIT_BYTES - stderr.length);
    },
  });
  const abort = () => void process.kill().catch(() => {});
  request.signal?.addEventListener("abort", abort, { once: true });
  try {
    if (request.stdin) await feedStdin(process, request.stdin, request.signal);
    const { exitCode } = await Promise.race([process.exit, aborted(request.signal)]);
    if (overflow) throw new Error(`the helper command printed more than ${limit} bytes`);
    return { exitCode, stdout: concatenateBytes(stdout), stderr };
  } finally {
    request.signal?.removeEventListener("abort", abort);
  }
}

/** Writes a stream to a process's stdin with backpressure (each write awaited), then closes it. */
export async function feedStdin(process: SpawnedProcess, data: ReadableStream<Uint8Array>, signal?: AbortSignal): Promise<void> {
  const reader = data.getReader();
  try {
    for (;;) {
      signal?.throwIfAborted();
      const next = await reader.read();
      if (next.done) break;
      if (next.value.byteLength > 0) await process.writeStdin(next.value);
    }
    await process.closeStdin();
  } catch (error) {
    await reader.cancel().catch(() => {});
    // The process may have exited early (a refusal): its non-zero exit code tells why, not the broken pipe. Otherwise
    // it is killed, never given end-of-file: a short input must not look complete (a write would rename it in place).
    const refused = await withinTime(
      process.exit.then(
        ({ exitCode }) => exitCode !== 0,
        () => true,
      ),
      2_000,
      () => false,
    );
    if (!refused) await process.kill().catch(() => {});
    if (!refused || signal?.aborted) throw error;
  } finally {
    reader.releaseLock();
  }
}

function aborted(signal: AbortSignal | undefined): Promise<never> {
  return new Promise((_resolve, reject) => {
    if (!signal) return;
    if (signal.aborted) reject(signal.reason);
    signal.addEventListener("abort", () => reject(signal.reason), { once: true });
  });
}
