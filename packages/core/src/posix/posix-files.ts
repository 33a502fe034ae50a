import { CapabilityNotSupportedError, FileNotFoundError, PathError, ProviderError } from "../errors/index.js";
import type { PathErrorReason } from "../errors/path-error-reason.js";
import type { SandboxDriverV1 } from "../v1/provider.js";
import type { FileEntry } from "../v1/sandbox.js";
import { feedStdin, helperEnvironment, runPosixScript, type PosixCommandResult } from "./posix-command.js";
import { sizeCheckedReadBody } from "./sized-read.js";
import { FILE_HELPER_PROGRAM, FILE_HELPER_WRAPPER } from "./file-helper-program.js";
import { parseListOutput, parseStatOutput } from "./file-helper-output.js";
import { nameHex } from "./name-bytes.js";
import { shellScript } from "./shell-quote.js";

/** The part of a driver the POSIX file operations need. */
export type SpawningDriver = Pick<SandboxDriverV1, "spawn" | "workspace">;

/** The file operations core derives from `spawn` when a driver leaves them out. */
export type PosixFileOperations = Required<Pick<SandboxDriverV1, "readFile" | "writeFile" | "stat" | "list" | "remove" | "mkdir" | "rename">>;

const REASONS: Partial<Record<number, { reason: PathErrorReason; say: string }>> = {
  45: { reason: "is-a-directory", say: "it is a directory" },
  46: { reason: "not-a-directory", say: "a file stands where a directory is needed" },
  47: { reason: "escapes-workspace", say: "a symbolic link on it leads outside the workspace" },
  48: { reason: "not-a-regular-file", say: "it is not a regular file (a FIFO, device or socket)" },
  51: { reason: "read-only", say: "it is on a read-only file system" },
  53: { reason: "invalid", say: "a name on it is not one the file system accepts" },
};

/** Exit code of the helper's wrapper when the image has no `python3` (ADR 0031). */
const NEEDS_PYTHON_EXIT = 52;

/**
 * Maps a file script's exit code to the typed error of the file policy (ADR 0020); returns normally on 0. Exported
 * for adapters that run core's file scripts through their own channel (`posixFileOperationsOver`).
 */
export function checkPosixFileResult(
  operation: string,
  path: string,
  result: Pick<PosixCommandResult, "exitCode" | "stderr">,
  backend?: string,
): void {
  if (result.exitCode === 0) return;
  if (result.exitCode === 44) throw new FileNotFoundError({ path, backend });
  if (result.exitCode === NEEDS_PYTHON_EXIT) {
    throw new CapabilityNotSupportedError({
      capability: "FILES",
      backend: backend ?? "this",
      supportedBy: [],
      detail:
        "core's file operations run a Python 3 helper inside the sandbox (race-free path resolution, ADR 0031) and this image has no python3; use an image with python3",
    });
  }
  const known = REASONS[result.exitCode];
  if (known) throw new PathError({ path, backend, reason: known.reason, message: `Cannot ${operation} ${JSON.stringify(path)}: ${known.say}.` });
  if (/permission denied/i.test(result.stderr))
    throw new PathError({
      path,
      backend,
      reason: "permission-denied",
      message: `Cannot ${operation} ${JSON.stringify(path)}: the sandbox user may not access it (permission denied).`,
    });
  const detail =
    result.exitCode === 49
      ? "no space left in the sandbox (nothing was written)"
      : result.stderr.trim() || `the helper exited with ${result.exitCode}`;
  throw new ProviderError({ backend, message: `Could not ${operation} ${JSON.stringify(path)} in the sandbox: ${detail}.` });
}

/** One run of a core file script: `sh -c script name args…`, optionally with `stdin`. */
export interface PosixScriptRequest {
  readonly script: string;
  readonly name: string;
  readonly args: readonly string[];
  readonly stdin?: ReadableStream<Uint8Array>;
  readonly signal?: AbortSignal;
}

/** How the read script began: bytes are coming (`body`), or it ended before any output (its exit code says why). */
export type PosixReadStart =
  | { readonly kind: "streaming"; readonly body: ReadableStream<Uint8Array> }
  | { readonly kind: "ended"; readonly exitCode: number; readonly stderr: string };

/**
 * The channel core's file scripts run through. `run` runs a script as the sandbox's own user with
 * `helperEnvironment(workspace)` and collects its output; `read` runs the read script and resolves once the first
 * byte arrived or the script ended. `posixFileOperations` uses the driver's `spawn`; an adapter with a cheaper or
 * better-behaved channel (Docker: a plain exec with bounded read-ahead) passes its own.
 */
export interface PosixScriptTransport {
  run(request: PosixScriptRequest): Promise<PosixCommandResult>;
  read(request: PosixScriptRequest): Promise<PosixReadStart>;
}

const randomSuffix = () => Array.from(crypto.getRandomValues(new Uint8Array(8)), (byte) => byte.toString(16).padStart(2, "0")).join("");

/**
 * Core's file operations over any channel that runs its POSIX scripts (ADR 0020, ADR 0023): the scripts, the exit
 * codes and their typed errors, the listing format and order are core's; the adapter only says how a script runs.
 * `backend` names the backend in the errors.
 */
export function posixFileOperationsOver(transport: PosixScriptTransport, options: { backend?: string } = {}): PosixFileOperations {
  const { backend } = options;
  const run = async (operation: string, path: string, request: HelperCall) => {
    const result = await transport.run(helperRequest(request));
    checkPosixFileResult(operation, path, result, backend);
    return result;
  };
  const quiet = async (operation: string, path: string, request: HelperCall) => {
    const result = await run(operation, path, request);
    if (result.stdout.byteLength > 0)
      throw new ProviderError({
        backend,
        message: `Could not ${operation} ${JSON.stringify(path)}: the file helper wrote output it never writes; nothing from it is trusted.`,
      });
  };
  return {
    async readFile(path, readOptions) {
      const start = await transport.read(helperRequest({ operation: "read", args: [path], signal: readOptions.signal }));
      if (start.kind === "streaming") return sizeCheckedReadBody(start.body, path, backend, readOptions.maxBytes);
      checkPosixFileResult("read", path, start, backend);
      throw new ProviderError({ backend, message: `Reading ${JSON.stringify(path)}: the file helper ended without reporting the file's size.` });
    },
    async writeFile(path, data, writeOptions) {
      const size = writeOptions.sizeBytes === undefined ? "" : String(writeOptions.sizeBytes);
      await quiet("write", path, { operation: "write", args: [path, randomSuffix(), size], signal: writeOptions.signal, stdin: data });
    },
    async list(path, listOptions) {
      const result = await run("list", path, { operation: "list", args: [path], signal: listOptions.signal });
      return sortEntries(parseListOutput(result.stdout, path, backend));
    },
    async stat(path, statOptions) {
      const args = statOptions.followSymlinks === true ? [path, "follow"] : [path];
      const result = await run("stat", path, { operation: "stat", args, signal: statOptions.signal });
      return parseStatOutput(result.stdout, path, backend);
    },
    async remove(path, removeOptions) {
      await quiet("remove", path, {
        operation: "remove",
        args: [path, removeOptions.recursive ? "recursive" : "single"],
        signal: removeOptions.signal,
      });
    },
    async mkdir(path, mkdirOptions) {
      await quiet("create directory", path, { operation: "mkdir", args: [path], signal: mkdirOptions.signal });
    },
    async rename(from, to, renameOptions) {
      await quiet("rename", from, { operation: "rename", args: [from, to], signal: renameOptions.signal });
    },
  };
}

/** One call of the file helper: the operation and its arguments (paths as the API names them). */
interface HelperCall {
  readonly operation: "read" | "write" | "list" | "stat" | "remove" | "mkdir" | "rename";
  readonly args: readonly string[];
  readonly signal?: AbortSignal;
  readonly stdin?: ReadableStream<Uint8Array>;
}

/**
 * The script request that runs the file helper (ADR 0031): `sh -c WRAPPER sbx-files PROGRAM operation hex…`, every
 * argument as the hex of its bytes (`nameHex`), so any name, including bytes that are not UTF-8, reaches it exactly.
 */
function helperRequest(call: HelperCall): PosixScriptRequest {
  return {
    script: FILE_HELPER_WRAPPER,
    name: "sbx-files",
    args: [FILE_HELPER_PROGRAM, call.operation, ...call.args.map(nameHex)],
    signal: call.signal,
    stdin: call.stdin,
  };
}

/**
 * Core's default file operations, built on the driver's `spawn` alone (ADR 0020): each runs a POSIX `sh` script in
 * the sandbox as the sandbox's user. `readFile` streams `cat`'s stdout (with no backpressure of its own: `spawn`
 * has none, so a driver with a file channel should provide `readFile`); `writeFile` streams into `cat`'s stdin.
 */
export function posixFileOperations(driver: SpawningDriver): PosixFileOperations {
  return posixFileOperationsOver({
    run: (request) => runPosixScript(driver, request),
    read: (request) => posixScriptReadStart(driver, request),
  });
}

/** The listing order of the file policy: by name, byte-wise (the C locale), on every backend. */
export function sortEntries(entries: FileEntry[]): FileEntry[] {
  return entries.sort((left, right) => (left.name < right.name ? -1 : left.name > right.name ? 1 : 0));
}

/**
 * Streams a file out of the sandbox through `spawn` (`cat` under the read policy). Resolves once the first byte
 * arrived or the helper ended, so refusals (not found, a directory, a link out) are typed errors before any stream
 * is handed out. Cancelling the stream kills the helper.
 */
export async function posixReadFile(
  driver: SpawningDriver,
  path: string,
  options: { signal?: AbortSignal; maxBytes?: number },
): Promise<ReadableStream<Uint8Array>> {
  const start = await posixScriptReadStart(driver, helperRequest({ operation: "read", args: [path], signal: options.signal }));
  if (start.kind === "streaming") return sizeCheckedReadBody(start.body, path, undefined, options.maxBytes);
  checkPosixFileResult("read", path, start);
  throw new ProviderError({ message: `Reading ${JSON.stringify(path)}: the file helper ended without reporting the file's size.` });
}

/** Starts a read script (`$1` the path) through `spawn`: resolves with the stream once the first byte arrived, or how it ended. */
async function posixScriptReadStart(driver: SpawningDriver, request: PosixScriptRequest): Promise<PosixReadStart> {
  const path = "the file";
  const options = { signal: request.signal };
  const pending: Uint8Array[] = [];
  let stderr = "";
  let wake: (() => void) | undefined;
  const notify = () => {
    const waiting = wake;
    wake = undefined;
    waiting?.();
  };
  let exited: { exitCode: number } | undefined;
  let failure: unknown;
  const process = await driver.spawn({
    command: shellScript(request.script, request.name, request.args),
    cwd: driver.workspace,
    env: helperEnvironment(driver.workspace),
    stdin: false,
    onStdout: (chunk) => {
      pending.push(chunk.slice());
      notify();
    },
    onStderr: (chunk) => {
      if (stderr.length < 8192) stderr += new TextDecoder().decode(chunk);
    },
  });
  const abort = () => {
    failure ??= options.signal?.reason ?? new Error("aborted");
    void process.kill().catch(() => {});
    notify();
  };
  options.signal?.addEventListener("abort", abort, { once: true });
  void process.exit
    .then(
      (value) => (exited = value),
      (error: unknown) => (failure ??= error),
    )
    .finally(notify);
  // Wait for the first byte or the end, whichever comes first.
  while (pending.length === 0 && !exited && !failure) await new Promise<void>((resolve) => (wake = resolve));
  if (failure && pending.length === 0) {
    options.signal?.removeEventListener("abort", abort);
    // eslint-disable-next-line @typescript-eslint/only-throw-error -- rethrows the process's own failure unchanged
    throw failure;
  }
  if (pending.length === 0 && exited) {
    options.signal?.removeEventListener("abort", abort);
    return { kind: "ended", exitCode: exited.exitCode, stderr };
  }
  const body = new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        for (;;) {
          if (pending.length > 0) return controller.enqueue(pending.shift()!);
          if (failure) {
            options.signal?.removeEventListener("abort", abort);
            return controller.error(failure);
          }
          if (exited) {
            options.signal?.removeEventListener("abort", abort);
            if (exited.exitCode !== 0)
              return controller.error(
                new ProviderError({
                  message: `Reading ${JSON.stringify(path)} failed midway (exit ${exited.exitCode}): ${stderr.trim() || "no reason given"}.`,
                }),
              );
            return controller.close();
          }
          await new Promise<void>((resolve) => (wake = resolve));
        }
      },
      cancel() {
        options.signal?.removeEventListener("abort", abort);
        void process.kill().catch(() => {});
      },
    },
    { highWaterMark: 0 },
  );
  return { kind: "streaming", body };
}

export { feedStdin };
