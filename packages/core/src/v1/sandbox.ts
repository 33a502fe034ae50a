import type { AuditRecord } from "./audit.js";
import type { SandboxSnapshot } from "./snapshots.js";
import type { Capabilities } from "./capabilities.js";

/** Called with decoded text as output arrives, in order. Multi-byte characters split across chunks are kept whole. */
export type OutputListener = (text: string) => void;

/** Options for `commands.run()` and `commands.start()`. */
export interface RunCommandOptions {
  /** Working directory. Default: the sandbox workspace. */
  cwd?: string;
  /** Extra environment variables for this command, on top of the sandbox's. */
  env?: Record<string, string>;
  /** Bytes or text written to the command's standard input, which is then closed. With `start()`, `true` keeps stdin open for `writeStdin()`. Needs `STDIN`. */
  stdin?: string | Uint8Array | true;
  /**
   * Kill the command and every process it started after this many milliseconds (counted from the call, before the
   * backend is asked to start it), then throw `TimeoutError` (`killed` says whether the kill was verified). Default: the
   * sandbox's `commands.defaultTimeoutMs` (create option), else no limit beyond the sandbox lifetime.
   */
  timeoutMs?: number;
  /** Bytes kept per stream; output beyond is dropped (still counted) and `truncated` is set. Default 16 MiB. */
  outputLimitBytes?: number;
  /**
   * Standard output and standard error as one stream, in the order the process wrote them: the command runs after
   * `exec 2>&1` in the sandbox's shell, so both descriptors are one pipe inside the sandbox and the order is the
   * process's own (two pipes read apart cannot give it). The result's `output` holds the stream, and so does `stdout`
   * (the pipe it came down), with `outputLimitBytes`, `truncated.stdout` and `totalBytes.stdout` applying to it;
   * `stderr` holds only what the shell wrote before the merge (normally nothing). With `start()`, the handle's
   * `stdout` carries the stream. Default false: separate streams. See ADR 0045.
   */
  combinedOutput?: boolean;
  /** Streaming standard output. A throw from it stops the command and rejects the call with `CallbackError`. */
  onStdout?: OutputListener;
  /** Streaming standard error. A throw from it stops the command and rejects the call with `CallbackError`. */
  onStderr?: OutputListener;
  /**
   * Streaming the merged stream of `combinedOutput` as it arrives, in the process's order. Needs `combinedOutput: true`
   * (refused without it: two separate streams have no order between them to report). A throw from it stops the command
   * and rejects the call with `CallbackError`.
   */
  onOutput?: OutputListener;
  /** Aborting kills the command and every process it started, then rejects with `AbortedError`. */
  signal?: AbortSignal;
}

/** What a finished command produced. A non-zero exit code is a result, not an error. */
export interface CommandResult {
  /** Exit status; 128 + N when killed by signal N. */
  readonly exitCode: number;
  /** Standard output decoded as UTF-8 (invalid bytes become U+FFFD). */
  readonly stdout: string;
  /** Standard error decoded as UTF-8. */
  readonly stderr: string;
  /** The raw bytes of standard output, up to the limit. */
  readonly stdoutBytes: Uint8Array;
  /** The raw bytes of standard error, up to the limit. */
  readonly stderrBytes: Uint8Array;
  /** Wall time from start to exit, in milliseconds. */
  readonly durationMs: number;
  /** Which streams went past `outputLimitBytes` and were cut. */
  readonly truncated: { readonly stdout: boolean; readonly stderr: boolean };
  /** Total bytes the command wrote to each stream, including dropped ones. */
  readonly totalBytes: { readonly stdout: number; readonly stderr: number };
  /** True when the backend reports the command was killed by the out-of-memory killer; null when the backend cannot tell. */
  readonly outOfMemoryKilled: boolean | null;
  /**
   * With `combinedOutput: true` only (absent otherwise): standard output and standard error as one text in the order
   * the process wrote them (anything the shell wrote to stderr before the merge comes first). Cut at
   * `outputLimitBytes` like `stdout`.
   */
  readonly output?: string;
}

/** A running background command. */
export interface CommandHandle {
  /** Backend process id (as a string; backends differ). */
  readonly pid: string;
  /** Resolves with the result when the command exits; after `kill()`, with exit code 137 (128 + SIGKILL) on every backend. */
  wait(): Promise<CommandResult>;
  /** Kills the command and every process it started. Safe to call twice. */
  kill(): Promise<void>;
  /** Writes to standard input; needs `stdin: true` at start. */
  writeStdin(data: string | Uint8Array): Promise<void>;
  /** Closes standard input (end of file for the command). */
  closeStdin(): Promise<void>;
  /** Standard output as it arrives (bytes up to the limit are kept until read). */
  readonly stdout: AsyncIterable<string>;
  /** Standard error as it arrives. */
  readonly stderr: AsyncIterable<string>;
}

/** Shell commands in the sandbox. */
export interface SandboxCommands {
  /** Runs `command` with the sandbox's shell (`sh -c`) and waits for it to exit. */
  run(command: string, options?: RunCommandOptions): Promise<CommandResult>;
  /** Starts `command` in the background and returns a handle. Needs `BACKGROUND_COMMANDS`. */
  start(command: string, options?: RunCommandOptions): Promise<CommandHandle>;
}

/** A Jupyter-style rich result: MIME type to data (text, or base64 for binary types). */
export interface ExecutionResult {
  /** True for the value of the last expression. */
  readonly isMainResult: boolean;
  /** MIME bundle, for example `{ "text/plain": "42", "image/png": "iVBOR..." }`. */
  readonly data: Readonly<Record<string, string>>;
}

/** An error raised by the code. */
export interface ExecutionError {
  /** Exception class, for example `"ZeroDivisionError"`. */
  readonly name: string;
  /** Exception message, for example `"division by zero"`. */
  readonly value: string;
  /** The formatted traceback. */
  readonly traceback: string;
}

/** What `runCode()` produced. Errors raised by the code are results here, not thrown. */
export interface Execution {
  /** What the code printed to standard output, up to `outputLimitBytes` (UTF-8). */
  readonly stdout: string;
  /** What the code printed to standard error, up to `outputLimitBytes`. */
  readonly stderr: string;
  /**
   * The exception the code raised, or null. A run that ended without an exception but not normally also has one:
   * `OutOfMemoryError` when the out-of-memory killer ended it (see `outOfMemoryKilled`), `KilledError` for another
   * signal. So a null `error` always means the code ran to its end.
   */
  readonly error: ExecutionError | null;
  /**
   * Rich results from the backend's own channel, or null where the backend has none (`RICH_RESULTS` off). Never parsed
   * from stdout. At most `maxResults` results whose data totals at most `outputLimitBytes`; `truncated.results` says
   * when some were dropped, here or by the backend (the sandbox agent drops a result over 16 MiB of data).
   */
  readonly results: readonly ExecutionResult[] | null;
  /** Wall time, in milliseconds. */
  readonly durationMs: number;
  /**
   * Which outputs went past their caps and were cut (`outputLimitBytes` for the streams; `maxResults`/bytes for
   * results, or a result the backend dropped over its own cap: a dropped result is always reported here).
   */
  readonly truncated: { readonly stdout: boolean; readonly stderr: boolean; readonly results: boolean };
  /** Total UTF-8 bytes the code wrote to each stream, including dropped ones. */
  readonly totalBytes: { readonly stdout: number; readonly stderr: number };
  /** True when the backend reports the run was killed by the out-of-memory killer; null when it cannot tell. */
  readonly outOfMemoryKilled: boolean | null;
}

/** Options for `runCode()`. */
export interface RunCodeOptions {
  /** Language; default `"python"`. Must be one of `capabilities.languages`. */
  language?: string;
  /** Run inside this code context (needs `STATEFUL_CODE`). Without it every call starts fresh. */
  contextId?: string;
  /** Time limit in milliseconds, counted from the call (before the backend is asked); the run is killed and `TimeoutError` thrown. */
  timeoutMs?: number;
  /** Bytes (UTF-8) kept per stream, and most bytes of rich-result data kept; the rest is dropped (still counted) and `truncated` is set. Default 16 MiB, as for commands. */
  outputLimitBytes?: number;
  /** Most rich results kept; later ones are dropped and `truncated.results` is set. Default 100. */
  maxResults?: number;
  /** Streaming standard output. A throw from it stops the run and rejects the call with `CallbackError`. */
  onStdout?: OutputListener;
  /** Streaming standard error. A throw from it stops the run and rejects the call with `CallbackError`. */
  onStderr?: OutputListener;
  /** Aborts the run. */
  signal?: AbortSignal;
}

/** A persistent interpreter: variables, imports and functions survive between `runCode()` calls with its id. */
export interface CodeContext {
  /** Pass as `runCode(code, { contextId })`. */
  readonly id: string;
  /** The context's language. */
  readonly language: string;
}

/** One entry of a directory listing or a stat. */
export interface FileEntry {
  /** Base name. */
  readonly name: string;
  /** Absolute path inside the sandbox. */
  readonly path: string;
  /** Entry type. */
  readonly type: "file" | "directory" | "symlink" | "other";
  /** Size in bytes. */
  readonly size: number;
  /** Last modification time, when the backend reports it. */
  readonly modifiedAt: Date | null;
}

/** Options shared by file operations. */
export interface FileOperationOptions {
  /** Aborts the operation. */
  signal?: AbortSignal;
  /**
   * Time limit in milliseconds, after which the call rejects with `TimeoutError` (`killed: false`: the backend may
   * still finish the operation) even if the backend never answers. Default 60000 for everything but streamed
   * transfers (`write`, `upload`, `download`, and the body of a `"stream"` read), which take no default limit.
   */
  timeoutMs?: number;
}

/** Options of `files.read()`. */
export interface FileReadOptions extends FileOperationOptions {
  /**
   * Largest file read whole, in bytes. A larger file is refused with `FileTooLargeError` (nothing past the limit is
   * held in memory). Default 64 MiB for `"text"` and `"bytes"`; with `"stream"` no limit unless given (the stream
   * then errors with `FileTooLargeError` once more bytes went by).
   */
  maxBytes?: number;
}

/** Options of `files.stat()`. */
export interface FileStatOptions extends FileOperationOptions {
  /**
   * Describe what a symbolic link points to (like `stat -L`) instead of the link itself. Default false: a link is
   * described as `{ type: "symlink" }`. Confined like every file call: a link (or a chain of links) leading out of the
   * workspace is `PathError` `escapes-workspace`, never followed; a link to nothing is `FileNotFoundError`. The
   * entry's `name` and `path` stay the ones asked for. Why: callers such as the AI SDK's session `stat` promise the
   * target's type and size.
   */
  followSymlinks?: boolean;
}

/** Options of `files.download()`. */
export interface FileDownloadOptions extends FileOperationOptions {
  /**
   * Refuse files larger than this many bytes with `FileTooLargeError` (naming the size and this option); nothing is
   * left on the host (a size the backend reports is refused before the host file is opened, a stream that runs past
   * it is cut and the partial host file removed). Default 1 GiB (`DEFAULT_DOWNLOAD_LIMIT_BYTES`): a download costs
   * the host disk, not memory, so the default is larger than a whole read's 64 MiB; a sparse file the sandbox made
   * for nothing is still refused.
   */
  maxBytes?: number;
}

/**
 * One change `files.watch()` saw, in the order the backend saw them (ADR 0049). `path` is absolute inside the
 * workspace. `"rename"` carries `from` (the old path) when both ends were inside the watched tree; a move in from
 * outside is a `"create"`, a move out is a `"remove"`. `"overflow"` is the marker for events that were dropped:
 * `dropped` counts the ones sbx dropped, and is null when the backend itself lost some and cannot say how many
 * (the kernel's inotify queue overflowed). After an overflow, list the tree again if you need its full state.
 */
export interface FileWatchEvent {
  /** What happened. */
  readonly type: "create" | "write" | "remove" | "rename" | "overflow";
  /** The entry it happened to (for `"overflow"`: the watched path). */
  readonly path: string;
  /** For `"rename"`: where the entry was before. Absent otherwise. */
  readonly from?: string;
  /** True when the entry is a directory (for `"overflow"`: false). */
  readonly isDirectory: boolean;
  /** For `"overflow"`: how many events were dropped, or null when the backend cannot tell. Absent otherwise. */
  readonly dropped?: number | null;
}

/** Options of `files.watch()`. */
export interface FileWatchOptions {
  /** Watch every directory below `path` too, including ones created later. Default false: `path`'s own entries only. */
  recursive?: boolean;
  /** Aborting stops the watch: iteration ends (normally, as after `stop()`). */
  signal?: AbortSignal;
  /**
   * Events held for a consumer that has not read them yet. Past it, events are dropped and one `"overflow"` marker
   * (with the count) takes their place, so a burst never grows host memory. Consecutive writes to one path are
   * coalesced first. Default 10000.
   */
  maxBufferedEvents?: number;
  /** How long establishing the watch may take, in milliseconds (`TimeoutError` past it). Default 60000. */
  timeoutMs?: number;
}

/**
 * A running watch: iterate it for events (one consumer). Iteration ends normally after `stop()`, the caller's abort
 * or disposal; it throws when the watch ended for another reason (the sandbox was killed or lost, the watched
 * directory was removed, the backend's channel broke), so a watch never stops silently.
 */
export interface FileWatcher extends AsyncIterable<FileWatchEvent>, AsyncDisposable {
  /** The watched path (absolute inside the workspace). */
  readonly path: string;
  /** Stops the watch in the sandbox; iteration ends after the events already buffered. Safe to call twice. */
  stop(): Promise<void>;
}

/** The sandbox's filesystem, confined to its workspace: paths are relative to the workspace or absolute inside it. */
export interface SandboxFiles {
  /** Writes a file, creating parent folders. Data may be text, bytes, or a stream (bounded memory). */
  write(
    path: string,
    data: string | Uint8Array | ReadableStream<Uint8Array> | AsyncIterable<Uint8Array>,
    options?: FileOperationOptions,
  ): Promise<void>;
  /** Reads a file as UTF-8 text (default), bytes, or a stream. Whole reads refuse files over `maxBytes` (default 64 MiB) with `FileTooLargeError`. */
  read(path: string, options?: FileReadOptions & { format?: "text" }): Promise<string>;
  read(path: string, options: FileReadOptions & { format: "bytes" }): Promise<Uint8Array>;
  read(path: string, options: FileReadOptions & { format: "stream" }): Promise<ReadableStream<Uint8Array>>;
  /** Lists a directory (one level). */
  list(path: string, options?: FileOperationOptions): Promise<FileEntry[]>;
  /** Describes one entry (a final symbolic link itself, unless `followSymlinks`); `FileNotFoundError` if missing. */
  stat(path: string, options?: FileStatOptions): Promise<FileEntry>;
  /** True if the path exists. */
  exists(path: string, options?: FileOperationOptions): Promise<boolean>;
  /** Removes a file or (with `recursive`) a directory. `FileNotFoundError` if missing. */
  remove(path: string, options?: FileOperationOptions & { recursive?: boolean }): Promise<void>;
  /** Creates a directory and its parents. Succeeds if it exists. */
  mkdir(path: string, options?: FileOperationOptions): Promise<void>;
  /** Renames or moves a file or directory. */
  rename(from: string, to: string, options?: FileOperationOptions): Promise<void>;
  /** Copies a host file into the sandbox, streaming. */
  upload(hostPath: string, sandboxPath: string, options?: FileOperationOptions): Promise<void>;
  /** Copies a sandbox file to the host, streaming with bounded memory; a failed or refused download leaves no host file. */
  download(sandboxPath: string, hostPath: string, options?: FileDownloadOptions): Promise<void>;
  /**
   * Watches a directory in the workspace for create, write, remove and rename events; resolves once the watch is in
   * place (every change after that is seen). Needs `FILE_WATCH`. `FileNotFoundError` for a missing directory,
   * `PathError` for a file or a path whose symbolic links lead outside the workspace.
   */
  watch(path: string, options?: FileWatchOptions): Promise<FileWatcher>;
}

/** Options of `terminals.create()`. */
export interface TerminalOptions {
  /** The command the terminal runs, with the sandbox's shell. Default: an interactive shell (`$SHELL -i`, else `sh -i`). */
  command?: string;
  /** Columns. Default 80. */
  cols?: number;
  /** Rows. Default 24. */
  rows?: number;
  /** Working directory. Default: the sandbox workspace. */
  cwd?: string;
  /** Extra environment variables for this terminal, on top of the sandbox's (`TERM` defaults to `xterm-256color`). */
  env?: Record<string, string>;
  /**
   * Kill the terminal and every process it started after this many milliseconds; `wait()` then rejects with
   * `TimeoutError` (`killed` says whether the kill was verified). Default: no limit beyond the sandbox lifetime.
   */
  timeoutMs?: number;
  /**
   * The terminal's output, raw bytes as the pseudo-terminal gives them (escape sequences included), in order. Nothing
   * is kept by sbx, so a long session costs no host memory. A throw from it kills the terminal and `wait()` rejects
   * with `CallbackError`.
   */
  onData: (data: Uint8Array) => void;
  /** Aborting kills the terminal and every process it started; `wait()` rejects with `AbortedError`. */
  signal?: AbortSignal;
}

/** How a terminal ended. */
export interface TerminalExit {
  /** The exit status the backend reported (128 + N when killed by signal N); never assumed when unknown (then `wait()` rejects). */
  readonly exitCode: number;
  /** Wall time from start to exit, in milliseconds. */
  readonly durationMs: number;
  /** True when the backend reports the out-of-memory killer ended it; null when it cannot tell. */
  readonly outOfMemoryKilled: boolean | null;
}

/** A running terminal: a process on a pseudo-terminal inside the sandbox (ADR 0049). */
export interface Terminal {
  /** Backend process id (as a string). */
  readonly pid: string;
  /** Sends input (keystrokes: text or bytes, for example `"\u0003"` for Ctrl-C). */
  write(data: string | Uint8Array): Promise<void>;
  /** Changes the terminal's size; the program in it gets SIGWINCH. */
  resize(size: { cols: number; rows: number }): Promise<void>;
  /** Kills the terminal and every process it started (verified by the backend). Safe to call twice. */
  kill(): Promise<void>;
  /** Resolves when the terminal's process exits, with its exit code; after `kill()`, 137 (128 + SIGKILL). */
  wait(): Promise<TerminalExit>;
}

/** Interactive terminals in the sandbox. Needs `PTY`. */
export interface SandboxTerminals {
  /** Starts a process on a pseudo-terminal of `cols` × `rows`. */
  create(options: TerminalOptions): Promise<Terminal>;
}

/** Options of `ports.expose()` (ADR 0053). */
export interface PortExposeOptions {
  /**
   * The bearer a client must present, in an `X-Sbx-Port-Token` header on the first HTTP request of each connection,
   * before any byte reaches the sandbox (the header is removed before forwarding). Default: 32 random bytes,
   * base64url. A string of 16–256 characters from `A-Z a-z 0-9 - _ . ~` is used as given. `false` turns the check off:
   * the port then carries any TCP protocol, and anything on the host that can connect to 127.0.0.1 reaches the server.
   */
  token?: string | false;
  /** Connections carried at once; more are closed at accept. Default 32 (each holds at most 512 KiB of host memory per direction). */
  maxConnections?: number;
  /** Aborts the expose while the listener is being opened. */
  signal?: AbortSignal;
}

/** What an exposed port carries now (`ExposedPort.stats()`). */
export interface ExposedPortStats {
  /** Connections open now (accepted, not yet closed). */
  readonly connections: number;
  /** Bytes the host holds for them now: waiting to go to the clients plus waiting to go into the sandbox. */
  readonly bufferedBytes: number;
  /** Connections refused so far: a wrong or missing token, a request head that was not HTTP, or past `maxConnections`. */
  readonly refused: number;
}

/**
 * A port of the sandbox reachable from the host (ADR 0053): `url` is `http://127.0.0.1:<ephemeral port>`; each
 * connection to it is carried to the same port on the sandbox's own loopback, without giving the sandbox any network.
 * Anyone on this host who can connect to 127.0.0.1 can reach `url`; the token narrows that to holders of `token`.
 */
export interface ExposedPort extends AsyncDisposable {
  /** The port inside the sandbox. */
  readonly port: number;
  /** The host URL, `http://127.0.0.1:<port on the host>` (loopback only). */
  readonly url: string;
  /** The token clients send in `X-Sbx-Port-Token`, or null when the check is off. */
  readonly token: string | null;
  /** What the port carries now. */
  stats(): ExposedPortStats;
  /** Stops listening and closes every carried connection. Safe to call twice. */
  close(): Promise<void>;
}

/** Servers inside the sandbox reached from the host. Needs `PORTS`. */
export interface SandboxPorts {
  /** Listens on 127.0.0.1 (an ephemeral port) and carries each connection to `port` inside the sandbox. */
  expose(port: number, options?: PortExposeOptions): Promise<ExposedPort>;
}

/**
 * Why a sandbox ended: `"killed"` (the caller's `kill()` or disposal), `"lifetime"` (its `timeoutMs` lifetime ran out:
 * core's own timer, the backend ends it too), `"lost"` (it was found gone: removed outside sbx, its host died; found
 * by a failed call or by core's periodic check).
 */
export type SandboxEndReason = "killed" | "lifetime" | "lost";

/** How a sandbox ended (`sandbox.ended`). */
export interface SandboxEnd {
  /** Why it ended. */
  readonly reason: SandboxEndReason;
  /** ISO time sbx learned of the end (the kill call, the lifetime's end, the loss found). */
  readonly endedAt: string;
}

/** An isolated place to run untrusted code. Dispose with `await using` or `kill()`. */
export interface Sandbox extends AsyncDisposable {
  /** Backend-assigned id; pass to `connectSandbox()` where `RECONNECT` is on. */
  readonly id: string;
  /** Backend name, for example `"docker"`. */
  readonly backend: string;
  /** The backend's capability manifest, fixed for the sandbox's lifetime. */
  readonly capabilities: Capabilities;
  /** Absolute path of the workspace, the default working directory and the root the files API is confined to. */
  readonly workspace: string;
  /** Shell commands. */
  readonly commands: SandboxCommands;
  /** Runs code. Errors raised by the code are in `Execution.error`, not thrown. */
  runCode(code: string, options?: RunCodeOptions): Promise<Execution>;
  /** Creates a persistent code context. Needs `STATEFUL_CODE`. */
  createCodeContext(options?: { language?: string; signal?: AbortSignal }): Promise<CodeContext>;
  /** Files in the workspace. */
  readonly files: SandboxFiles;
  /** Interactive terminals (needs `PTY`; refused with `CapabilityNotSupportedError` elsewhere). */
  readonly terminals: SandboxTerminals;
  /** Servers inside reached from the host (needs `PORTS`; refused with `CapabilityNotSupportedError` elsewhere). */
  readonly ports: SandboxPorts;
  /** The audit record: what was requested, applied and how it is enforced. */
  audit(): AuditRecord;
  /**
   * Sets the sandbox's remaining lifetime to `timeoutMs` from now (longer or shorter than what is left), enforced by the
   * backend out of the sandbox's reach; recorded in the audit record (`policies.lifetimeChanges`). Needs `SET_LIFETIME`
   * (ADR 0050); resolves with the new end (ISO time).
   */
  setLifetime(options: { timeoutMs: number; signal?: AbortSignal }): Promise<{ expiresAt: string }>;
  /**
   * Pauses the sandbox (needs `PAUSE`, ADR 0055): every process in it stops, memory kept, until `resume()`. While
   * paused, commands, code, file calls and terminal input are refused with `SandboxPausedError` (`SBX_SANDBOX_PAUSED`);
   * `kill()`, `setLifetime()`, `audit()` and `resume()` work. The lifetime keeps running: a paused sandbox still ends at
   * its deadline, and with its host process (Docker's dead-man's switch). Resolves once the backend verified the stop;
   * pausing a paused sandbox resolves at once. Recorded in the audit record (`policies.pauses`).
   */
  pause(options?: { signal?: AbortSignal }): Promise<void>;
  /** Lets a paused sandbox run again (needs `PAUSE`, ADR 0055); resolves at once when it is not paused. */
  resume(options?: { signal?: AbortSignal }): Promise<void>;
  /** True from the moment `pause()` is called until `resume()` succeeded (a failed pause turns it back to false). */
  readonly paused: boolean;
  /**
   * Takes a filesystem snapshot: the workspace (and any other writable filesystem the backend keeps), never running
   * processes or memory, and none of the sandbox's secrets, credentials, environment, labels or policies. Create from it
   * with `createSandbox(target, { fromSnapshot: snapshot.id })`; the backend keeps it until `deleteSnapshot(target, id)`
   * (nothing deletes it automatically). Needs `SNAPSHOTS` (ADR 0056).
   */
  snapshot(options?: { signal?: AbortSignal }): Promise<SandboxSnapshot>;
  /**
   * Whether the sandbox has ended: `kill()` or disposal happened, its lifetime ran out (true at that moment, without a
   * call), or it was lost (found by a failed call, or by core's check every 10 s while open; see docs/errors.md).
   */
  readonly closed: boolean;
  /**
   * Resolves once the sandbox ends, with why (`"killed"`, `"lifetime"`, `"lost"`) and when; never rejects. Lets a
   * caller (an agent loop, a pool) learn that a sandbox ended without calling it. See ADR 0045.
   */
  readonly ended: Promise<SandboxEnd>;
  /**
   * Destroys the sandbox and everything in it. Safe to call more than once. Bounded: rejects with `TimeoutError` if
   * the backend does not confirm within 30 s (the sandbox is closed either way). Resolves for a sandbox that is already gone.
   */
  kill(): Promise<void>;
}
