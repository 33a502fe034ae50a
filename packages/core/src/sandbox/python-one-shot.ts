import type { CodeRequest, DriverExecution, SandboxDriverV1 } from "../v1/provider.js";
import type { ExecutionError } from "../v1/sandbox.js";
import { ProviderError, RuntimeMissingError } from "../errors/index.js";
import { concatenateBytes } from "../posix/concatenate-bytes.js";
import { shellQuote } from "../posix/shell-quote.js";

/**
 * The wrapper that runs one-shot Python. It reads the code from stdin, runs it as `__main__`, prints a normal
 * traceback to stderr on error, and writes the structured error (name, value, traceback) as JSON to the file
 * named by argv[1]: a channel of its own, so nothing is ever parsed out of the program's stdout or stderr. The file
 * is created empty before the code runs, so a missing file means the channel itself was lost (never "no error").
 */
export const PYTHON_ONE_SHOT_WRAPPER = `
import sys, json, traceback, types
_error_path = sys.argv[1]
open(_error_path, "w").close()
_code = sys.stdin.read()
sys.stdin.close()
sys.argv = ["<code>"]
_module = types.ModuleType("__main__")
_module.__dict__["__builtins__"] = __builtins__
sys.modules["__main__"] = _module
try:
    exec(compile(_code, "<code>", "exec"), _module.__dict__)
except BaseException as _exception:
    if isinstance(_exception, SystemExit) and (_exception.code is None or _exception.code == 0):
        sys.exit(0)
    _lines = traceback.format_exception(type(_exception), _exception, _exception.__traceback__.tb_next if _exception.__traceback__ else None)
    _text = "".join(_lines)
    sys.stderr.write(_text)
    sys.stderr.flush()
    try:
        _value = str(_exception)
    except BaseException:
        _value = "<exception str() failed>"
    with open(_error_path, "w") as _file:
        json.dump({"name": type(_exception).__name__, "value": _value, "traceback": _text}, _file)
    sys.exit(1)
`;

/**
 * Runs one-shot Python through a driver's `spawn`, for backends without a code channel of their own.
 * The structured error is read back from a file in /tmp by a second command, never parsed from output.
 */
export async function runPythonOneShot(
  driver: SandboxDriverV1,
  request: CodeRequest,
  byteOutput?: {
    /** Receives stdout as raw bytes instead of `request.onStdout` text, so a caller that caps bytes never decodes what it drops. */
    readonly onStdout: (chunk: Uint8Array) => void;
    /** Receives stderr as raw bytes instead of `request.onStderr` text. */
    readonly onStderr: (chunk: Uint8Array) => void;
  },
): Promise<DriverExecution> {
  const errorPath = `/tmp/.sbx-error-${crypto.randomUUID()}.json`;
  const decoderOut = new TextDecoder();
  const decoderErr = new TextDecoder();
  const process = await driver.spawn({
    command: `exec python3 -c ${shellQuote(PYTHON_ONE_SHOT_WRAPPER)} ${errorPath}`,
    cwd: request.cwd,
    env: { PYTHONUNBUFFERED: "1", ...request.env },
    stdin: true,
    onStdout: byteOutput?.onStdout ?? ((chunk) => request.onStdout(decoderOut.decode(chunk, { stream: true }))),
    onStderr: byteOutput?.onStderr ?? ((chunk) => request.onStderr(decoderErr.decode(chunk, { stream: true }))),
  });
  // On abort the kill is awaited: the run settles only once the driver verified the interpreter and its children are
  // gone, and a kill the driver cannot verify rejects the run (core then reports `killed: false`).
  let killing: Promise<void> | undefined;
  const abort = () => {
    killing ??= process.kill();
    killing.catch(() => {});
  };
  request.signal.addEventListener("abort", abort, { once: true });
  if (request.signal.aborted) abort();
  try {
    const writing = (async () => {
      await process.writeStdin(new TextEncoder().encode(request.code));
      await process.closeStdin();
    })();
    writing.catch(() => {});
    await Promise.race([writing, process.exit]);
    const { exitCode, outOfMemoryKilled } = await process.exit;
    if (request.signal.aborted) {
      await killing;
      return { error: null, results: null };
    }
    let error: ExecutionError | null = null;
    if (exitCode !== 0 && !outOfMemoryKilled) {
      const channel = await readErrorChannel(driver, errorPath, request);
      // The channel is created before the code runs: a missing one is never silently read as "no error".
      if (!channel.present && exitCode === 127) throw new RuntimeMissingError({ runtime: "python3" });
      if (!channel.present) throw missingErrorChannel(driver, errorPath);
      error = channel.error;
    }
    return { error, results: null, outOfMemoryKilled: outOfMemoryKilled ?? null, exitCode };
  } finally {
    request.signal.removeEventListener("abort", abort);
  }
}

/** The marker the reader prints when the channel file exists, so a missing file is told from an empty one. */
const PRESENT_MARKER = "sbx-error-channel-present";

async function readErrorChannel(
  driver: SandboxDriverV1,
  errorPath: string,
  request: CodeRequest,
): Promise<{ present: boolean; error: ExecutionError | null }> {
  const chunks: Uint8Array[] = [];
  const reader = await driver.spawn({
    command: `if [ -e ${errorPath} ]; then echo ${PRESENT_MARKER}; cat ${errorPath}; fi; rm -f ${errorPath}`,
    cwd: request.cwd,
    env: request.env,
    stdin: false,
    onStdout: (chunk) => chunks.push(chunk.slice()),
    onStderr: () => {},
  });
  await reader.exit;
  const output = new TextDecoder().decode(concatenateBytes(chunks));
  if (!output.startsWith(PRESENT_MARKER)) return { present: false, error: null };
  const text = output.slice(PRESENT_MARKER.length).trim();
  if (text.length === 0) return { present: true, error: null };
  try {
    const parsed = JSON.parse(text) as ExecutionError;
    return { present: true, error: { name: String(parsed.name), value: String(parsed.value), traceback: String(parsed.traceback) } };
  } catch {
    return { present: true, error: null };
  }
}

function missingErrorChannel(driver: SandboxDriverV1, errorPath: string): ProviderError {
  return new ProviderError({
    message: `Python exited with an error, but its structured error (written to ${errorPath}) could not be read back from sandbox ${driver.id}: the driver's spawns do not seem to share /tmp, or the file could not be written. The traceback is in stderr. Give the driver a runCode of its own, or make every spawn see the same /tmp.`,
  });
}
