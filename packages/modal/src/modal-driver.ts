import { randomBytes } from "node:crypto";
import { FileNotFoundError, PathError, ProviderError, SandboxNotFoundError, type SbxError, type DriverAudit, type FileEntry, type SandboxDriverV1, type SpawnedProcess, type SpawnRequest } from "@sbx/core";
import type { ContainerProcess, FileInfo, Sandbox } from "modal";
import { COMMAND_MARKER_VARIABLE, COMMAND_WRAPPER, KILL_COMMAND_SCRIPT, KILL_PROCESS_TREE_SCRIPT } from "./kill-process-tree.js";
import { mapModalError } from "./map-modal-error.js";

/** The sandbox's workspace: sent as the sandbox `workdir` at create, so Modal starts there and creates it. */
export const MODAL_WORKSPACE = "/workspace";

/** Exit code reported for a command whose sandbox ended (or that was killed) before it reported its own. */
export const KILLED_EXIT_CODE = 128 + 9;

/** How long a finished command's output streams may stay open (a background child holding them) before they are cut. */
export const OUTPUT_DRAIN_GRACE_MS = 1_000;

/** Size of the chunks a file read is handed to core in. */
const READ_CHUNK_BYTES = 1024 * 1024;
/**
 * Files up to this size are read whole through Modal's filesystem API (which returns one byte array). Larger ones are
 * read in ranges of this size through `dd` execs, so the host never holds more than one range of a file the sandbox
 * may have made arbitrarily large (a sparse file costs the sandbox nothing).
 */
const WHOLE_READ_LIMIT_BYTES = 8 * 1024 * 1024;

/** What `ModalDriver` needs besides the SDK sandbox. */
export interface ModalDriverOptions {
  /** The audit record made at create or connect. */
  readonly audit: DriverAudit;
}

function entryType(type: string): FileEntry["type"] {
  if (type === "file") return "file";
  if (type === "directory") return "directory";
  if (type === "symlink") return "symlink";
  return "other";
}

function toFileEntry(info: FileInfo): FileEntry {
  return {
    name: info.name,
    path: info.path,
    type: entryType(info.type),
    size: Number(info.size ?? 0),
    modifiedAt: typeof info.modifiedTime === "number" ? new Date(info.modifiedTime * 1000) : null,
  };
}

function parentOf(path: string): string {
  const index = path.lastIndexOf("/");
  return index <= 0 ? "/" : path.slice(0, index);
}

function normalise(path: string): string | undefined {
  const segments: string[] = [];
  for (const segment of path.split("/")) {
    if (segment === "" || segment === ".") continue;
    if (segment === "..") {
      if (segments.length === 0) return undefined;
      segments.pop();
    } else segments.push(segment);
  }
  return "/" + segments.join("/");
}

function isInside(path: string, root: string): boolean {
  return path === root || path.startsWith(`${root}/`);
}

async function pump(stream: ReadableStream<Uint8Array>, deliver: (chunk: Uint8Array) => void): Promise<void> {
  const reader = stream.getReader();
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      if (value && value.byteLength > 0) deliver(value);
    }
  } finally {
    reader.releaseLock();
  }
}

async function collect(stream: ReadableStream<Uint8Array>): Promise<Uint8Array> {
  const chunks: Uint8Array[] = [];
  let total = 0;
  const reader = stream.getReader();
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    chunks.push(value);
    total += value.byteLength;
  }
  if (chunks.length === 1) return chunks[0]!;
  const bytes = new Uint8Array(total);
  let offset = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return bytes;
}

/**
 * One live Modal sandbox as an sbx driver: commands through `sandbox.exec` (binary output streamed as it arrives,
 * stdin through the exec's stdin stream), files through the SDK's filesystem API (`sandbox.filesystem`), kill
 * through a second exec that kills the command's whole tree. Every SDK error is mapped by `mapModalError`.
 */
export class ModalDriver implements SandboxDriverV1 {
  readonly id: string;
  readonly workspace = MODAL_WORKSPACE;
  readonly audit: DriverAudit;
  private destroyed: Promise<void> | undefined;
  private readonly ended = new AbortController();

  constructor(
    private readonly sandbox: Sandbox,
    options: ModalDriverOptions,
  ) {
    this.id = sandbox.sandboxId;
    this.audit = options.audit;
  }

  /**
   * Maps an SDK error. An error that maps to nothing more specific than `ProviderError` is checked against the
   * sandbox's state (one `poll`): when the sandbox has finished (terminated, timed out, idle) or is unknown, the
   * error is `SandboxNotFoundError` instead. Modal's filesystem API reports a call on a finished sandbox as an
   * "unexpected error", so without this a lost sandbox would look like a backend fault.
   */
  private async failure(error: unknown, operation: string, path?: string): Promise<SbxError> {
    const mapped = mapModalError(error, { operation, sandboxId: this.id, path });
    if (mapped.code !== "SBX_PROVIDER" || this.ended.signal.aborted) return mapped;
    let exitCode: number | null;
    try {
      exitCode = await this.sandbox.poll();
    } catch (pollError) {
      const pollMapped = mapModalError(pollError, { operation, sandboxId: this.id });
      return pollMapped.code === "SBX_SANDBOX_NOT_FOUND" ? new SandboxNotFoundError({ backend: "modal", cause: error, sandboxId: this.id, message: pollMapped.message }) : mapped;
    }
    if (exitCode === null) return mapped;
    return new SandboxNotFoundError({ backend: "modal", cause: error, sandboxId: this.id, message: `The Modal sandbox ${this.id} has finished (exit code ${exitCode}: terminated, timed out or idle) while trying to ${operation}.` });
  }

  /** The sandbox's exit code when it has finished, null when Modal no longer knows it, undefined while it runs. */
  private async finishedExitCode(): Promise<number | null | undefined> {
    try {
      const exitCode = await this.sandbox.poll();
      return exitCode === null ? undefined : exitCode;
    } catch (error) {
      return mapModalError(error, { operation: "check the sandbox", sandboxId: this.id }).code === "SBX_SANDBOX_NOT_FOUND" ? null : undefined;
    }
  }

  /** Settles like `work`, or with `fallback` once the sandbox is destroyed, so nothing waits on a sandbox that is gone. */
  private async orWhenDestroyed<T>(work: Promise<T>, fallback: T): Promise<T> {
    if (this.ended.signal.aborted) return fallback;
    let onAbort: (() => void) | undefined;
    const destroyed = new Promise<T>((resolve) => {
      onAbort = () => resolve(fallback);
      this.ended.signal.addEventListener("abort", onAbort, { once: true });
    });
    try {
      return await Promise.race([work, destroyed]);
    } finally {
      this.ended.signal.removeEventListener("abort", onAbort!);
    }
  }

  async spawn(request: SpawnRequest): Promise<SpawnedProcess> {
    const commandId = randomBytes(12).toString("hex");
    let process: ContainerProcess<Uint8Array>;
    try {
      process = await this.sandbox.exec(["/bin/sh", "-c", COMMAND_WRAPPER, "sbx", request.command, commandId, request.cwd, request.stdin ? "stdin" : "no-stdin"], {
        mode: "binary",
        env: { ...request.env, [COMMAND_MARKER_VARIABLE]: commandId },
      });
    } catch (error) {
      throw await this.failure(error, "start a command");
    }
    const stdin = process.stdin.getWriter();
    let stdinClosed = false;
    const closeStdinOnce = async () => {
      if (stdinClosed) return;
      stdinClosed = true;
      await stdin.close();
    };
    // A command without stdin reads /dev/null (the wrapper's `no-stdin`), so no EOF needs to be sent for it.
    const output = Promise.all([pump(process.stdout, request.onStdout), pump(process.stderr, request.onStderr)]);
    output.catch(() => {});
    let exited = false;
    let killed = false;
    const exit = (async () => {
      let exitCode: number;
      try {
        exitCode = await this.orWhenDestroyed(process.wait(), KILLED_EXIT_CODE);
      } catch (error) {
        if (killed || this.ended.signal.aborted) exitCode = KILLED_EXIT_CODE;
        else throw mapModalError(error, { operation: "wait for a command", sandboxId: this.id });
      }
      // An exit by SIGKILL that sbx did not cause may be the sandbox ending under the command (terminated
      // elsewhere, its lifetime or idle timeout): that is the sandbox-lost rule, not a result.
      if (exitCode === KILLED_EXIT_CODE && !killed && !this.ended.signal.aborted) {
        const finished = await this.finishedExitCode();
        if (finished !== undefined) {
          throw new SandboxNotFoundError({ backend: "modal", sandboxId: this.id, message: `The Modal sandbox ${this.id} ended while a command ran in it (${finished === null ? "it is unknown to Modal" : `exit code ${finished}: terminated, timed out or idle`}). Create a new sandbox.` });
        }
      }
      // Deliver the output that is still in flight; a background child holding the pipe does not hold the result.
      let timer: NodeJS.Timeout | undefined;
      const grace = new Promise<void>((resolve) => (timer = setTimeout(resolve, OUTPUT_DRAIN_GRACE_MS)));
      await this.orWhenDestroyed(Promise.race([output.catch(() => {}), grace]), undefined);
      clearTimeout(timer);
      void process.stdout.cancel().catch(() => {});
      void process.stderr.cancel().catch(() => {});
      return { exitCode };
    })().finally(() => {
      exited = true;
    });
    let killing: Promise<void> | undefined;
    const kill = () => {
      killing ??= (async () => {
        killed = true;
        if (exited || this.ended.signal.aborted) return;
        try {
          const killer = await this.sandbox.exec(["/bin/sh", "-c", KILL_COMMAND_SCRIPT, "sbx-kill", commandId, KILL_PROCESS_TREE_SCRIPT], { stdout: "ignore", stderr: "ignore" });
          await this.orWhenDestroyed(killer.wait(), 0);
        } catch (error) {
          if (exited || this.ended.signal.aborted) return;
          const mapped = mapModalError(error, { operation: "kill a command", sandboxId: this.id });
          if (mapped.code === "SBX_SANDBOX_NOT_FOUND") return;
          throw mapped;
        }
      })();
      return killing;
    };
    return {
      pid: commandId,
      exit,
      writeStdin: async (data) => {
        try {
          await stdin.write(data);
        } catch (error) {
          throw await this.failure(error, "write to stdin");
        }
      },
      closeStdin: async () => {
        try {
          await closeStdinOnce();
        } catch (error) {
          if (exited) return;
          throw await this.failure(error, "close stdin");
        }
      },
      kill,
    };
  }

  /** Stats a path, following symlinks only while they stay inside the workspace; refuses anything but a regular file. */
  private async requireRegularFile(path: string): Promise<FileInfo> {
    let current = path;
    for (let hops = 0; hops < 16; hops++) {
      let info: FileInfo;
      try {
        info = await this.sandbox.filesystem.stat(current);
      } catch (error) {
        throw await this.failure(error, "read a file", path);
      }
      const type = entryType(info.type);
      if (type === "file") return info;
      if (type !== "symlink" || !info.symlinkTarget) {
        throw new PathError({ backend: "modal", path, reason: type === "directory" ? "is-a-directory" : "not-a-regular-file" });
      }
      const target = normalise(info.symlinkTarget.startsWith("/") ? info.symlinkTarget : `${parentOf(current)}/${info.symlinkTarget}`);
      if (!target || !isInside(target, this.workspace)) {
        throw new PathError({ backend: "modal", path, reason: "not-a-regular-file", message: `Refused path ${JSON.stringify(path)}: it is a symlink leading outside the workspace ${this.workspace}.` });
      }
      current = target;
    }
    throw new PathError({ backend: "modal", path, reason: "not-a-regular-file", message: `Refused path ${JSON.stringify(path)}: too many levels of symlinks.` });
  }

  async readFile(path: string, _options: { signal?: AbortSignal }): Promise<ReadableStream<Uint8Array>> {
    // Checked first: Modal's ReadFile would block forever on a FIFO the sandbox made, and follows any symlink.
    const info = await this.requireRegularFile(path);
    if (info.size > WHOLE_READ_LIMIT_BYTES) return this.readInRanges(path);
    let bytes: Uint8Array;
    try {
      bytes = await this.sandbox.filesystem.readBytes(path);
    } catch (error) {
      throw await this.failure(error, "read a file", path);
    }
    let offset = 0;
    return new ReadableStream<Uint8Array>({
      pull(controller) {
        if (offset >= bytes.byteLength) return controller.close();
        const end = Math.min(bytes.byteLength, offset + READ_CHUNK_BYTES);
        controller.enqueue(bytes.subarray(offset, end));
        offset = end;
      },
    });
  }

  /** Streams a large file one `WHOLE_READ_LIMIT_BYTES` range per exec, only as fast as the reader pulls. */
  private readInRanges(path: string): ReadableStream<Uint8Array> {
    let index = 0;
    return new ReadableStream<Uint8Array>({
      pull: async (controller) => {
        let range: Uint8Array;
        try {
          const process = await this.sandbox.exec(["dd", `if=${path}`, `bs=${WHOLE_READ_LIMIT_BYTES}`, `skip=${index}`, "count=1", "status=none"], { mode: "binary", stderr: "ignore" });
          const [bytes, exitCode] = await Promise.all([collect(process.stdout), process.wait()]);
          if (exitCode !== 0) throw new ProviderError({ backend: "modal", message: `Reading ${JSON.stringify(path)} failed: dd exited ${exitCode}.` });
          range = bytes;
        } catch (error) {
          throw await this.failure(error, "read a file", path);
        }
        index += 1;
        if (range.byteLength === 0) return controller.close();
        for (let offset = 0; offset < range.byteLength; offset += READ_CHUNK_BYTES) controller.enqueue(range.subarray(offset, Math.min(range.byteLength, offset + READ_CHUNK_BYTES)));
        if (range.byteLength < WHOLE_READ_LIMIT_BYTES) controller.close();
      },
    }, { highWaterMark: 0 });
  }

  async writeFile(path: string, data: ReadableStream<Uint8Array>, _options: { signal?: AbortSignal; sizeBytes?: number }): Promise<void> {
    // Modal's writeBytes takes the whole content (it then streams it to the sandbox in 256 KiB messages).
    const bytes = await collect(data);
    try {
      await this.sandbox.filesystem.writeBytes(bytes, path);
    } catch (error) {
      throw await this.failure(error, "write a file", path);
    }
  }

  async list(path: string, _options: { signal?: AbortSignal }): Promise<FileEntry[]> {
    try {
      return (await this.sandbox.filesystem.listFiles(path)).map(toFileEntry);
    } catch (error) {
      throw await this.failure(error, "list a directory", path);
    }
  }

  async stat(path: string, _options: { signal?: AbortSignal }): Promise<FileEntry> {
    try {
      return toFileEntry(await this.sandbox.filesystem.stat(path));
    } catch (error) {
      throw await this.failure(error, "stat a file", path);
    }
  }

  async remove(path: string, options: { recursive: boolean; signal?: AbortSignal }): Promise<void> {
    try {
      await this.sandbox.filesystem.remove(path, { recursive: options.recursive });
    } catch (error) {
      throw await this.failure(error, "remove a file", path);
    }
  }

  async mkdir(path: string, _options: { signal?: AbortSignal }): Promise<void> {
    try {
      await this.sandbox.filesystem.makeDirectory(path, { createParents: true });
    } catch (error) {
      throw await this.failure(error, "make a directory", path);
    }
  }

  async rename(from: string, to: string, _options: { signal?: AbortSignal }): Promise<void> {
    // The filesystem API has no rename; one exec of mv, argv only (no shell parsing of the paths).
    const script = '[ -e "$1" ] || [ -L "$1" ] || exit 44; if [ -d "$2" ] && [ ! -L "$2" ] && [ ! -d "$1" ]; then exit 45; fi; exec mv -f -- "$1" "$2"';
    let exitCode: number;
    let stderr = "";
    try {
      const process = await this.sandbox.exec(["/bin/sh", "-c", script, "sbx-rename", from, to], { stdout: "ignore" });
      [exitCode, stderr] = await Promise.all([process.wait(), process.stderr.readText()]);
    } catch (error) {
      throw await this.failure(error, "rename a file", from);
    }
    if (exitCode === 44) throw new FileNotFoundError({ backend: "modal", path: from });
    if (exitCode === 45) throw new PathError({ backend: "modal", path: to, reason: "is-a-directory", message: `Cannot rename ${JSON.stringify(from)} onto ${JSON.stringify(to)}: a directory is in the way.` });
    if (exitCode !== 0) {
      if (/no such file or directory/i.test(stderr)) throw new FileNotFoundError({ backend: "modal", path: parentOf(to) });
      throw new ProviderError({ backend: "modal", message: `Renaming ${JSON.stringify(from)} to ${JSON.stringify(to)} failed in the Modal sandbox (mv exited with ${exitCode}): ${stderr.slice(0, 500)}` });
    }
  }

  async destroy(): Promise<void> {
    this.destroyed ??= (async () => {
      try {
        await this.sandbox.terminate();
      } catch (error) {
        const mapped = mapModalError(error, { operation: "terminate the sandbox", sandboxId: this.id });
        if (mapped.code !== "SBX_SANDBOX_NOT_FOUND") throw mapped;
      } finally {
        this.ended.abort();
        this.sandbox.detach();
      }
    })();
    return this.destroyed;
  }
}
