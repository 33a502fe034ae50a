import { createSandbox, DEFAULT_OUTPUT_LIMIT_BYTES, isSbxError, type CreateSandboxOptions, type Sandbox } from "@sbx/core";
import {
  BaseSandbox,
  type DeleteResult,
  type ExecuteResponse,
  type FileDownloadResponse,
  type FileUploadResponse,
  type GlobResult,
  type GrepResult,
  type LsResult,
  type ReadResult,
  type SandboxBackendProtocolV2,
} from "deepagents";
import { withFileOperationError } from "./file-errors.js";
import { runMerged } from "./merged-output.js";
import { globNatively, grepNatively, listNatively, type TextReader } from "./native-file-search.js";
import { numberedWindow } from "./read-window.js";
import { shellRunsBaseSandboxCommands } from "./shell-probe.js";

/** Default `commandTimeoutMs`: five minutes. */
export const DEFAULT_COMMAND_TIMEOUT_MS = 300_000;

/** How `ls`, `glob`, `grep`, `read` and `delete` reach the files. */
export type FileSearchMode = "auto" | "shell" | "native";

/** Options of `SbxSandbox` (the glue; the sandbox itself takes sbx's `CreateSandboxOptions`). */
export interface SbxSandboxOptions {
  /**
   * Time limit of every `execute()` command, in milliseconds; past it the command and everything it started are
   * killed and `execute` returns `exitCode: null` with a line saying so. Default 300000 (five minutes). Why: deepagents'
   * `execute` takes no timeout, and a command left waiting (a server in the foreground, a prompt) would otherwise run
   * until the sandbox's lifetime ends.
   */
  commandTimeoutMs?: number;
  /**
   * Bytes of combined output `execute()` keeps; the rest is dropped and `truncated` is set (deepagents then tells the
   * model). Default `DEFAULT_OUTPUT_LIMIT_BYTES` (16 MiB), sbx's own: deepagents evicts large tool results itself.
   */
  outputLimitBytes?: number;
  /**
   * `"shell"`: deepagents' own `BaseSandbox` shell commands (`find -L … -printf`, `stat -c`, `grep -rHnF`, `awk`,
   * `rm -rf`) through `execute`, which reach the whole sandbox filesystem. `"native"`: sbx's file API (`files.list`,
   * `files.read`, `files.remove`), confined to the workspace, for backends whose shell lacks those commands.
   * `"auto"` (default) asks the sandbox once, on first use, whether its shell runs them.
   */
  fileSearch?: FileSearchMode;
  /** Whether `close()` (and disposal) kills the sandbox. Default true for `create()`, and for a wrapped sandbox. */
  ownsSandbox?: boolean;
}

/**
 * A LangChain deepagents sandbox backend (`SandboxBackendProtocolV2`, on deepagents' `BaseSandbox`) over any sbx
 * sandbox: Docker, E2B, Modal, the fake or any adapter. Pass it as `backend` to `createDeepAgent` or
 * `createFilesystemMiddleware`; the agent then gets ls, read_file, write_file, edit_file, delete, glob, grep and
 * execute on the sandbox.
 *
 * - `execute(command)` returns stdout and stderr combined in the order the process wrote them (merged inside the
 *   sandbox: sbx's `combinedOutput`, ADR 0045), the exit code, and `truncated`; it runs under `commandTimeoutMs`.
 * - `uploadFiles`/`downloadFiles` move bytes through sbx's file API, which is confined to the workspace; sbx's typed
 *   path errors become deepagents' codes (`file_not_found`, `is_directory`, `permission_denied`, `invalid_path`).
 * - `ls`, `glob`, `grep`, `read` and `delete` use deepagents' shell commands where the sandbox's shell runs them, and
 *   sbx's file API where it does not (see `fileSearch`).
 */
export class SbxSandbox extends BaseSandbox implements SandboxBackendProtocolV2, AsyncDisposable {
  /** The sbx sandbox's id (deepagents runs `execute` only for a backend with a non-empty `id`). */
  readonly id: string;
  /** The sbx sandbox underneath. */
  readonly sandbox: Sandbox;
  readonly #commandTimeoutMs: number;
  readonly #outputLimitBytes: number;
  readonly #fileSearch: FileSearchMode;
  readonly #ownsSandbox: boolean;
  #usesShell: Promise<boolean> | undefined;

  /** Wraps an sbx sandbox that already exists. */
  constructor(sandbox: Sandbox, options: SbxSandboxOptions = {}) {
    super();
    this.sandbox = sandbox;
    this.id = sandbox.id;
    this.#commandTimeoutMs = options.commandTimeoutMs ?? DEFAULT_COMMAND_TIMEOUT_MS;
    this.#outputLimitBytes = options.outputLimitBytes ?? DEFAULT_OUTPUT_LIMIT_BYTES;
    this.#fileSearch = options.fileSearch ?? "auto";
    this.#ownsSandbox = options.ownsSandbox ?? true;
  }

  /**
   * Creates an sbx sandbox (`target` as for `createSandbox`: `"docker://python:3.12-slim"`, `"fake://"`, a provider,
   * or `"auto"`) and wraps it. The sandbox's lifetime is `createOptions.timeoutMs` (sbx's default is 10 minutes):
   * give an agent session enough.
   */
  static async create(
    target?: Parameters<typeof createSandbox>[0],
    createOptions?: CreateSandboxOptions,
    options: SbxSandboxOptions = {},
  ): Promise<SbxSandbox> {
    return new SbxSandbox(await createSandbox(target, createOptions), options);
  }

  /** Whether the sandbox is still usable as far as sbx knows (false after `close()`, or once a call found it gone). */
  get isRunning(): boolean {
    return !this.sandbox.closed;
  }

  /** The workspace: the default working directory of `execute` and the root sbx's file API is confined to. */
  get workspace(): string {
    return this.sandbox.workspace;
  }

  /** Kills the sandbox (when this backend owns it). Safe to call twice. */
  async close(): Promise<void> {
    if (this.#ownsSandbox) await this.sandbox.kill();
  }

  /** Same as `close()`, for `await using`. */
  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }

  /** Runs `command` with `sh -c` in the workspace; stdout and stderr combined in order. A non-zero exit code is a result. */
  async execute(command: string): Promise<ExecuteResponse> {
    return runMerged(this.sandbox, command, { timeoutMs: this.#commandTimeoutMs, outputLimitBytes: this.#outputLimitBytes });
  }

  /** Writes each file (creating parent folders); a path error is reported per file, other files still go. */
  async uploadFiles(files: Array<[string, Uint8Array]>): Promise<FileUploadResponse[]> {
    const responses: FileUploadResponse[] = [];
    for (const [path, content] of files) {
      const outcome = await withFileOperationError(() => this.sandbox.files.write(path, content));
      responses.push({ path, error: outcome.error });
    }
    return responses;
  }

  /** Reads each file as bytes (whole files up to sbx's 64 MiB read limit); a path error is reported per file. */
  async downloadFiles(paths: string[]): Promise<FileDownloadResponse[]> {
    const responses: FileDownloadResponse[] = [];
    for (const path of paths) {
      const outcome = await withFileOperationError(() => this.sandbox.files.read(path, { format: "bytes" }));
      responses.push({ path, content: outcome.value, error: outcome.error });
    }
    return responses;
  }

  /** Lists one folder: deepagents' `find` where the shell runs it, else `files.list`. */
  override async ls(path: string): Promise<LsResult> {
    if (await this.#shell()) return super.ls(path);
    return listNatively(this.sandbox, path);
  }

  /** Finds files by glob under `path` (default `/`, which the native mode refuses: it reaches only the workspace). */
  override async glob(pattern: string, path: string = "/"): Promise<GlobResult> {
    if (await this.#shell()) return super.glob(pattern, path);
    return globNatively(this.sandbox, pattern, path);
  }

  /** Searches for a literal string under `path` (default `/`), optionally only in files whose name matches `glob`. */
  override async grep(pattern: string, path: string | null = "/", glob: string | null = null, maxCount: number | null = null): Promise<GrepResult> {
    if (await this.#shell()) return super.grep(pattern, path ?? "/", glob, maxCount);
    return grepNatively(this.sandbox, this.#readText, { pattern, path: path ?? "/", glob, maxCount });
  }

  /** Reads lines `offset + 1` to `offset + limit`, numbered; binary files whole, as bytes. */
  override async read(filePath: string, offset: number = 0, limit: number = 500): Promise<ReadResult> {
    if (await this.#shell()) return super.read(filePath, offset, limit);
    const raw = await this.readRaw(filePath);
    if (raw.error !== undefined || raw.data === undefined) return { error: raw.error ?? `File '${filePath}' not found` };
    const mimeType = "mimeType" in raw.data ? raw.data.mimeType : "text/plain";
    const content = raw.data.content;
    if (typeof content === "string") return numberedWindow(content, offset, limit, mimeType);
    if (Array.isArray(content)) return numberedWindow(content.join("\n"), offset, limit, mimeType);
    return { content, mimeType };
  }

  /** Deletes a file or a folder with everything in it. */
  override async delete(filePath: string): Promise<DeleteResult> {
    if (await this.#shell()) return super.delete(filePath);
    const found = await withFileOperationError(() => this.sandbox.files.stat(filePath));
    if (found.error === "file_not_found") return { error: `Error: '${filePath}' not found` };
    const removed = await withFileOperationError(() => this.sandbox.files.remove(filePath, { recursive: true }));
    if (removed.error !== null) return { error: `Error deleting '${filePath}': ${removed.error}` };
    return { path: filePath, filesUpdate: null };
  }

  readonly #readText: TextReader = async (path) => {
    try {
      const raw = await this.readRaw(path);
      if (raw.data === undefined || typeof raw.data.content !== "string") return { skipped: "skip" };
      return { text: raw.data.content };
    } catch (error) {
      if (isSbxError(error, "SBX_FILE_TOO_LARGE")) return { skipped: "too-large" };
      throw error;
    }
  };

  #shell(): Promise<boolean> {
    if (this.#fileSearch !== "auto") return Promise.resolve(this.#fileSearch === "shell");
    this.#usesShell ??= shellRunsBaseSandboxCommands(this.sandbox);
    return this.#usesShell;
  }
}
