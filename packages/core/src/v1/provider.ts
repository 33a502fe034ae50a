import { z } from "zod";
import type { PolicyRecord } from "./audit.js";
import type { Capabilities } from "./capabilities.js";
import type { ResolvedCreateOptions } from "./options.js";
import type { ExecutionError, ExecutionResult, FileEntry, FileWatchEvent } from "./sandbox.js";
import type { ListedSandbox } from "./listing.js";
import type { SandboxSnapshot } from "./snapshots.js";

/** Whether a backend is usable here, and if not, why and how to fix it. */
export interface BackendStatus {
  /** Backend name. */
  readonly backend: string;
  /** True when a sandbox could be created now. */
  readonly usable: boolean;
  /** Why not, when not usable; a short description of what was found when usable. */
  readonly reason: string;
  /** What to install or start to make it usable (empty when usable). */
  readonly remedy: string;
  /** True for isolation boundaries; false for the fake. */
  readonly isolating: boolean;
}

/** What `create()` receives. */
export interface ProviderCreateRequest {
  /** The part of the URI after `scheme://`, for example `"python:3.12-slim"`; empty for the provider's default. */
  readonly target: string;
  /** Validated options with defaults applied. Core has already refused options needing capabilities the provider lacks. */
  readonly options: ResolvedCreateOptions;
  /** Aborts creation; the provider must clean up anything half-made. */
  readonly signal?: AbortSignal;
}

/**
 * A sandbox backend: what an adapter package implements. Core turns the primitives into the full `Sandbox`
 * (validation, capability checks, timeouts, output caps, path confinement, audit record, typed errors),
 * so adapters stay small. See docs/writing-an-adapter.md.
 */
export interface SandboxProviderV1 {
  /** Always `"sbx-v1"` for this version of the protocol. */
  readonly specificationVersion: "sbx-v1";
  /** Backend name and URI scheme, for example `"docker"`. */
  readonly backend: string;
  /** The npm package implementing it, for error messages. */
  readonly packageName: string;
  /** Static manifest, fixed for the provider's lifetime. */
  readonly capabilities: Capabilities;
  /** True when the backend is an isolation boundary. */
  readonly isolating: boolean;
  /**
   * The zod object schema of the settings the provider accepts (`options.settings`, and the factory's argument), or
   * any object whose `shape` names them. Core refuses a settings key it does not name with `InvalidArgumentError`
   * before `create` is called (ADR 0029); without it, every settings key is refused. Default: none.
   */
  readonly settingsSchema?: { readonly shape: Readonly<Record<string, unknown>> };
  /** Checks whether the backend can be used now, without creating anything. */
  detect(options?: { signal?: AbortSignal }): Promise<BackendStatus>;
  /** Creates a sandbox. Must refuse (throw) rather than run with a weaker policy than requested. */
  create(request: ProviderCreateRequest): Promise<SandboxDriverV1>;
  /** Attaches to a live sandbox by id. Present exactly when `RECONNECT` is on. */
  connect?(request: { sandboxId: string; options: ResolvedCreateOptions; signal?: AbortSignal }): Promise<SandboxDriverV1>;
  /**
   * Lists the backend's sbx sandboxes carrying every one of `labels` (the `metadata` given at create). Present exactly
   * when `LIST_SANDBOXES` is on (ADR 0050).
   */
  list?(request: { labels: Readonly<Record<string, string>>; signal?: AbortSignal }): Promise<ListedSandbox[]>;
  /**
   * Creates the sandbox named `name`, or attaches to the live one of that name: exactly one caller creates when
   * several race, across processes (the backend's own name uniqueness). `created` says which. Present exactly when
   * `NAMED_SANDBOXES` is on (ADR 0050).
   */
  getOrCreate?(request: ProviderCreateRequest & { name: string }): Promise<{ driver: SandboxDriverV1; created: boolean }>;
  /**
   * Lists the snapshots this backend holds that sbx made (`sandbox.snapshot()`), whoever made them. Present exactly
   * when `SNAPSHOTS` is on (ADR 0056).
   */
  listSnapshots?(request: { signal?: AbortSignal }): Promise<SandboxSnapshot[]>;
  /**
   * Deletes one snapshot sbx made and frees its storage; resolves `false` when there is none of that id. Refuses an
   * id the backend did not make as a snapshot (never deletes anything else). Present exactly when `SNAPSHOTS` is on
   * (ADR 0056).
   */
  deleteSnapshot?(request: { id: string; signal?: AbortSignal }): Promise<boolean>;
}

/** What the provider recorded while creating a sandbox; core adds times, ids and environment names. */
export interface DriverAudit {
  /** Backend version as reported by the backend. */
  readonly backendVersion: string;
  /** Per-policy records. Must include `network`, `limits`, `mounts`, `user` and `lifetime`. */
  readonly policies: { network: PolicyRecord; limits: PolicyRecord; mounts: PolicyRecord; user: PolicyRecord; lifetime: PolicyRecord } & Record<
    string,
    PolicyRecord
  >;
  /** Free-form notes, for example engine warnings. */
  readonly notes?: readonly string[];
}

/** A request to start one process. */
export interface SpawnRequest {
  /** A shell command line, run with `sh -c` (or the backend's equivalent). */
  readonly command: string;
  /** Absolute working directory. */
  readonly cwd: string;
  /**
   * Environment: core's defaults (`PATH`, `HOME` = the workspace, `LANG=C.UTF-8`), then the sandbox env, secrets and
   * per-command env merged over them (the caller's values win). The driver passes it as the process's whole environment.
   */
  readonly env: Readonly<Record<string, string>>;
  /** Whether stdin should be open for `writeStdin`; when false, stdin is empty/closed. */
  readonly stdin: boolean;
  /** Called with each stdout chunk in arrival order. Never throws (core catches everything behind it). */
  readonly onStdout: (chunk: Uint8Array) => void;
  /** Called with each stderr chunk in arrival order. Never throws. */
  readonly onStderr: (chunk: Uint8Array) => void;
  /**
   * Secret values in `env` that were not in `options.secrets` at create (issued credentials, known only after the
   * sandbox existed). Adapters that record or log requests must redact them like `options.secrets`. Optional.
   */
  readonly secretValues?: readonly string[];
}

/** A started process. */
export interface SpawnedProcess {
  /** Backend process id. */
  readonly pid: string;
  /**
   * Resolves when the process exits, with its exit code, after every output chunk has been delivered.
   * Must not wait for end-of-stream if a background child still holds stdout open.
   */
  readonly exit: Promise<{ exitCode: number; outOfMemoryKilled?: boolean | null }>;
  /** Writes to stdin. */
  writeStdin(data: Uint8Array): Promise<void>;
  /** Closes stdin. */
  closeStdin(): Promise<void>;
  /**
   * Kills the process and every descendant (including ones that called `setsid`, cleared their environment with
   * `env -i`, or double-forked). Idempotent.
   *
   * Verified-kill contract: resolves only after the driver verified that the process and all its descendants are
   * gone; rejects (with an error saying what it saw) when it cannot verify that, for example because the in-sandbox
   * kill helper could not run, or processes survived. Core reports `TimeoutError.killed: true` only when this
   * resolved and `exit` settled within the kill grace (10 s); anything else is reported as `killed: false` with what
   * happened. A driver that cannot verify should escalate (for Docker: through the engine) rather than resolve.
   */
  kill(): Promise<void>;
}

/** A request to run code. */
export interface CodeRequest {
  /** Source code. */
  readonly code: string;
  /** A language from the manifest. */
  readonly language: string;
  /** A context id from `createCodeContext`, or undefined for a fresh one-shot run. */
  readonly contextId?: string;
  /** Environment for the run. */
  readonly env: Readonly<Record<string, string>>;
  /** Absolute working directory. */
  readonly cwd: string;
  /** Called with stdout chunks in order. Never throws. Core caps what it keeps; the driver must not buffer the output itself. */
  readonly onStdout: (text: string) => void;
  /** Called with stderr chunks in order. Never throws. */
  readonly onStderr: (text: string) => void;
  /**
   * Aborted by core on timeout or caller abort; the driver must stop the run and then settle: resolve once the run is
   * verified stopped (its processes gone, or its interpreter interrupted), reject when it cannot verify that. Core
   * reports `killed: true` only when the run settled within the kill grace without such a rejection.
   */
  readonly signal: AbortSignal;
  /**
   * Bytes of stdout and of stderr core keeps (the caller's `outputLimitBytes`, default 16 MiB). A driver that can cut
   * output inside the sandbox may stop sending past it and report what it cut in `DriverExecution.droppedBytes`.
   * Absent when the caller streams output with `onStdout`/`onStderr`: the caller then sees what the backend sends.
   */
  readonly outputLimitBytes?: number;
  /**
   * The caps core applies to the run's rich results: `maxResults` (the caller's, default 100) and `limitBytes` (UTF-8
   * bytes of every MIME value together: the caller's `outputLimitBytes`, default 16 MiB). A driver that collects results
   * while the run goes on may keep no more than these and count the rest in `DriverExecution.droppedResults`, so a
   * flood of results never grows its memory; core applies them to what the driver returns either way.
   */
  readonly resultCaps?: { readonly maxResults: number; readonly limitBytes: number };
}

/** What a driver's `runCode` returns; core adds stdout/stderr, caps and timing. */
export interface DriverExecution {
  /** The error the code raised, or null. */
  readonly error: ExecutionError | null;
  /** Rich results, or null where the backend has no rich-result channel. Core caps them (count and bytes). */
  readonly results: readonly ExecutionResult[] | null;
  /** True when the backend saw the run killed by the out-of-memory killer; null or absent when it cannot tell. */
  readonly outOfMemoryKilled?: boolean | null;
  /** The interpreter's exit code, for process-per-run backends; absent otherwise. A signal death (128 + N) without `error` is reported as `KilledError`. */
  readonly exitCode?: number | null;
  /**
   * Output bytes the backend itself cut inside the sandbox past its output limit (never delivered to `onStdout` /
   * `onStderr`), so core can count them and report truncation. Omitted when the backend cuts nothing.
   */
  readonly droppedBytes?: { readonly stdout: number; readonly stderr: number };
  /**
   * Rich results the backend itself dropped before they reached `results` (over its own size or count caps), so core
   * reports `truncated.results`: a dropped result is a truncated run, never a run that had none. Omitted or 0 when
   * nothing was dropped.
   */
  readonly droppedResults?: number;
}

/** A request to watch a directory (`files.watch`, ADR 0049). */
export interface WatchFilesRequest {
  /** Absolute directory path inside the workspace, normalised by core. The driver refuses symbolic links leading out. */
  readonly path: string;
  /** Watch subdirectories too, including ones created later. */
  readonly recursive: boolean;
  /**
   * Called with each event in order (absolute paths). Never throws. Core bounds what it keeps; a driver that loses
   * events itself reports one `"overflow"` event with `dropped: null`.
   */
  readonly onEvent: (event: FileWatchEvent) => void;
  /** Called at most once when the watch ended without `stop()` (the directory was removed, the channel broke), with why. */
  readonly onEnd: (error: Error) => void;
  /** Aborts establishing the watch. */
  readonly signal: AbortSignal;
}

/** A watch the driver established. */
export interface DriverFileWatch {
  /** Stops the watch (no `onEnd` after it). Idempotent. */
  stop(): Promise<void>;
}

/** A request to start a process on a pseudo-terminal (`terminals.create`, ADR 0049). */
export interface TerminalRequest {
  /** A shell command line, run with `sh -c`, its stdin, stdout and stderr the terminal. */
  readonly command: string;
  /** Absolute working directory. */
  readonly cwd: string;
  /** The process's whole environment (as for `SpawnRequest.env`). */
  readonly env: Readonly<Record<string, string>>;
  /** Columns and rows. */
  readonly cols: number;
  readonly rows: number;
  /** Called with each chunk of the terminal's output in order. Never throws. */
  readonly onData: (chunk: Uint8Array) => void;
}

/** A request to open one TCP connection to a port inside the sandbox (`ports.expose`, ADR 0053). */
export interface PortConnectionRequest {
  /** The port on the sandbox's own loopback (127.0.0.1), 1–65535. */
  readonly port: number;
  /**
   * Bytes the driver may hand to `onData` before core grants more with `consumed` (the sandbox-to-host credit): what
   * the host holds per connection in that direction is bounded by it.
   */
  readonly window: number;
  /** Called with each chunk from the server inside, in order, within the credit. Never throws. */
  readonly onData: (chunk: Uint8Array) => void;
  /** Called once when the server inside closed its sending side (end of stream). Never throws. */
  readonly onEnd: () => void;
  /** Called at most once when the connection is over (both sides done, reset, or the channel lost), with why if it broke. */
  readonly onClose: (error?: Error) => void;
  /** Aborts opening the connection. */
  readonly signal: AbortSignal;
}

/** An open connection to a port inside the sandbox. */
export interface DriverPortConnection {
  /**
   * Sends bytes to the server inside; resolves once the backend took them within its own window (the host-to-sandbox
   * credit), so a caller that awaits each write holds a flooding client by backpressure. Rejects once closed.
   */
  write(chunk: Uint8Array): Promise<void>;
  /** The host consumed `bytes` of what `onData` gave: the driver may deliver that many more. */
  consumed(bytes: number): void;
  /** Closes the host-to-sandbox direction after the bytes written so far (half close). */
  end(): void;
  /** Closes the connection at once, both directions. Idempotent; no `onClose` error after it. */
  close(): void;
}

/** A started terminal: a `SpawnedProcess` (stdin is the terminal's input, the verified kill) that can be resized. */
export interface DriverTerminal extends SpawnedProcess {
  /** Sets the terminal's size. */
  resize(size: { readonly cols: number; readonly rows: number }): Promise<void>;
}

/**
 * What `probe()` answers when core asks whether the sandbox still exists (ADR 0037): `"running"` (it does),
 * `"gone"` (the backend says it no longer exists or has finished), `"unknown"` (the backend could not tell). Core
 * treats any other value as `"unknown"`.
 */
export const probeAnswerSchema = z.enum(["running", "gone", "unknown"]);

/** One of `probeAnswerSchema`'s values. */
export type ProbeAnswer = z.infer<typeof probeAnswerSchema>;

/**
 * What a backend gives the sbx sandbox agent so that commands through it keep the backend's own enforcement
 * (adr/0025): verified kills by audit tag, the out-of-memory report and the lost-sandbox rule. The same shape as
 * `AgentCommandEnforcement` of the agent client.
 */
export interface DriverAgentEnforcement {
  /** Starts the agent itself, like `spawn` but with the process's audit tag left unset (see the agent client). */
  spawnAgent(request: SpawnRequest): Promise<SpawnedProcess>;
  /** A fresh audit tag for one command (a decimal number the kernel accepts as a loginuid). */
  newTag(): string;
  /** Kills every process carrying `tag`; resolves only once the backend verified none is left. */
  killTagged(tag: string): Promise<void>;
  /** After an unexplained SIGKILL exit: whether the sandbox's out-of-memory kill counter grew (null: unknown). */
  outOfMemoryKilled(): Promise<boolean | null>;
  /** The backend's lost-sandbox error when the sandbox is gone (asked after a failure), else undefined. */
  lostError(cause?: unknown): Promise<Error | undefined>;
  /**
   * For a backend that kills by process id instead of audit tag (ADR 0051): core then sends no tag to the agent (the
   * command's shell becomes a child subreaper instead) and reports each command's process id here under its tag
   * (`started`) and its end (`ended`). Default none.
   */
  readonly commandProcesses?: {
    /** The agent started the command tagged `tag` as process `processId` (its own session's leader). */
    started(tag: string, processId: number): void;
    /** The command tagged `tag` has ended: forget it. */
    ended(tag: string): void;
  };
}

/**
 * A driver's declaration that it can carry the sbx sandbox agent (Python 3.8+ stdlib, started by core through the
 * driver's `spawn`): core then gives the sandbox `runCode` and `createCodeContext` through the agent, and stops the
 * agent before `destroy` (ADR 0037). The adapter declares `STATEFUL_CODE` and `RICH_RESULTS` in its manifest and
 * writes neither method itself.
 */
export interface DriverCodeAgent {
  /**
   * `"agent"`: commands go through the agent while it runs (no process start per command), else through `spawn`.
   * `"driver"`: commands always use `spawn`. Default: `"agent"` when `enforcement` is given, else `"driver"`.
   */
  readonly commands?: "agent" | "driver";
  /**
   * Whether the first command starts the agent when no code call has: `true` waits for it; `"background"` starts it
   * without waiting (that command takes `spawn`, later ones the agent once it runs; ADR 0051). Default false.
   */
  readonly commandsStartAgent?: boolean | "background";
  /** The backend's enforcement for commands through the agent. Default none (the agent kills its own commands). */
  readonly enforcement?: DriverAgentEnforcement;
  /** How long the agent may take to say hello after its spawn, in ms. Default 30000. */
  readonly startTimeoutMs?: number;
}

/**
 * One live sandbox, as an adapter implements it. Paths given to file methods are already normalised by core:
 * absolute, inside `workspace`, with no `..` segments. Required: `spawn`, `destroy` and `audit`; every other method
 * is optional, and the file methods have core defaults built on `spawn` (ADR 0020, ADR 0031, ADR 0037,
 * docs/writing-an-adapter.md). A driver that implements them itself must follow the same file policy (the contract
 * suite checks it). Core resolves which methods a driver has once, when the sandbox is made.
 */
export interface SandboxDriverV1 {
  /** Backend-assigned id. */
  readonly id: string;
  /** Absolute workspace path; the files API is confined to it. */
  readonly workspace: string;
  /** What was applied and how it is enforced. */
  readonly audit: DriverAudit;
  /**
   * Optional: the backend's own object for this sandbox (a dockerode `Container`, an E2B `Sandbox`), for the
   * adapter's typed escape hatch (`nativeHandleOf` in `@sbx/core/adapter`). Outside the portable contract.
   */
  readonly native?: unknown;
  /**
   * Optional: variables every process in the sandbox gets beneath the caller's (for example the egress proxy's
   * `HTTP_PROXY`). Core merges them once, over its own defaults and under the sandbox's `env`, its secrets and each
   * command's `env` (ADR 0037). Default none.
   */
  readonly baseEnvironment?: Readonly<Record<string, string>>;
  /**
   * Optional: the driver can carry the sbx sandbox agent, and core applies it (see `DriverCodeAgent`). A driver's own
   * method wins over the agent's (its own `runCode` keeps code off the agent). Default: no agent.
   */
  readonly codeAgent?: DriverCodeAgent;
  /** Starts a process. */
  spawn(request: SpawnRequest): Promise<SpawnedProcess>;
  /**
   * Runs code. Optional: without it core runs one-shot Python through `spawn` with a structured error channel
   * (see `runPythonOneShot`). Must exist when `STATEFUL_CODE` is on.
   */
  runCode?(request: CodeRequest): Promise<DriverExecution>;
  /** Creates a persistent code context. Present exactly when `STATEFUL_CODE` is on. */
  createCodeContext?(request: { language: string; cwd: string; signal?: AbortSignal }): Promise<{ id: string; language: string }>;
  /**
   * Streams a regular file's bytes. `FileNotFoundError` if missing; `PathError` (`not-a-regular-file`) for devices,
   * FIFOs, directories or symlinks out of bounds. Optional: core's default runs its file helper through `spawn`.
   */
  readFile?(
    path: string,
    options: {
      signal?: AbortSignal;
      /**
       * The most bytes the caller will take. A driver that learns the file's size before streaming (core's read
       * helper prints it first) may refuse a larger file at once with `FileTooLargeError` instead of streaming up to
       * the limit; core enforces the limit either way. Default: no hint.
       */
      maxBytes?: number;
    },
  ): Promise<ReadableStream<Uint8Array>>;
  /**
   * Writes a file from a stream, creating parent directories, replacing any existing file. Optional: core's default
   * runs its file helper through `spawn`, the bytes on its stdin.
   */
  writeFile?(
    path: string,
    data: ReadableStream<Uint8Array>,
    options: {
      signal?: AbortSignal;
      /** The exact byte length of `data` when core knows it up front (strings, byte arrays, host uploads), so archive-based adapters can stream without spooling. */
      sizeBytes?: number;
    },
  ): Promise<void>;
  /**
   * Lists one directory level, sorted by name (byte-wise). Optional: core's default runs a POSIX helper through
   * `spawn` (ADR 0020). Symbolic links are listed as links, never followed.
   */
  list?(path: string, options: { signal?: AbortSignal }): Promise<FileEntry[]>;
  /**
   * Describes an entry, not following a final symlink; with `followSymlinks`, what the link leads to (a link out of
   * the workspace is `PathError` `escapes-workspace`, a link to nothing `FileNotFoundError`), keeping the asked
   * `name` and `path`. Optional: core's default runs its file helper through `spawn`. A driver written before
   * `followSymlinks` existed answers `symlink` for a link; core then asks its own helper (ADR 0046).
   */
  stat?(
    path: string,
    options: {
      signal?: AbortSignal;
      /** Follow a final symbolic link, confined to the workspace. Default false. */
      followSymlinks?: boolean;
    },
  ): Promise<FileEntry>;
  /**
   * Removes a file or link, or a directory when `recursive`; a directory without `recursive` is
   * `PathError("is-a-directory")`. Optional: core's default runs `rm` through `spawn`.
   */
  remove?(path: string, options: { recursive: boolean; signal?: AbortSignal }): Promise<void>;
  /** Creates a directory and parents; no error if it exists. Optional: core's default runs `mkdir -p` through `spawn`. */
  mkdir?(path: string, options: { signal?: AbortSignal }): Promise<void>;
  /** Renames (a final symlink at `to` is replaced, never followed). Optional: core's default runs `mv` through `spawn`. */
  rename?(from: string, to: string, options: { signal?: AbortSignal }): Promise<void>;
  /**
   * Optional: whether the sandbox still exists, asked by core once (bounded, `signal` fires at the bound) after a
   * call failed in a way that might mean it is gone (a `ProviderError`, an unknown error, a timeout: never a typed
   * answer such as `FileNotFoundError` or a non-zero exit). `"gone"` turns the failure into `SandboxNotFoundError`
   * and marks the sandbox lost (ADR 0037). Must not throw for a sandbox that is gone: answer `"gone"`. Without it,
   * only a `SandboxNotFoundError` from the driver marks the sandbox lost.
   */
  probe?(options: { signal: AbortSignal }): Promise<ProbeAnswer>;
  /**
   * Moves the sandbox's end to `expiresAt` (ISO time; later or earlier than now's), enforced where the sandbox cannot
   * reach it (on Docker the root deadline process is replaced from outside), and resolves with the end the backend
   * applied. Must exist when `SET_LIFETIME` is on (ADR 0050).
   */
  setLifetime?(request: { expiresAt: string; signal?: AbortSignal }): Promise<{ expiresAt: string }>;
  /**
   * Pauses the sandbox (`PAUSE`, ADR 0055): resolves only once every process of the sandbox is verified stopped, its
   * memory kept, while the backend's lifetime enforcement and end-with-host keep working; rejects (with the sandbox
   * left running) when that cannot be verified. Answers how the pause is enforced, for the audit record. Core refuses
   * every other call while paused, so no call of its own reaches a paused sandbox. Must exist when `PAUSE` is on.
   */
  pause?(request: { signal?: AbortSignal }): Promise<{ enforcement: string }>;
  /** Lets every process stopped by `pause` run again (`PAUSE`, ADR 0055). Must exist when `PAUSE` is on. */
  resume?(request: { signal?: AbortSignal }): Promise<void>;
  /**
   * Takes a filesystem snapshot of the sandbox (its workspace, and any other writable filesystem the backend keeps),
   * never its processes or memory, and none of its secrets, credentials, environment, labels or policies; the backend
   * holds it until `deleteSnapshot`. A create with `options.fromSnapshot` starts from it. Must exist when `SNAPSHOTS`
   * is on (ADR 0056).
   */
  snapshot?(request: { signal?: AbortSignal }): Promise<SandboxSnapshot>;
  /**
   * Optional: watches a directory (`FILE_WATCH`, ADR 0049); resolves once the watch is in place. A driver that
   * declares `codeAgent` gets it from the sbx sandbox agent (inotify inside the sandbox).
   */
  watchFiles?(request: WatchFilesRequest): Promise<DriverFileWatch>;
  /**
   * Optional: starts a process on a pseudo-terminal (`PTY`, ADR 0049). Its exit code must be the real one or an
   * error, never assumed. A driver that declares `codeAgent` with `enforcement` gets it from the sbx sandbox agent.
   */
  openTerminal?(request: TerminalRequest): Promise<DriverTerminal>;
  /**
   * Optional: opens one TCP connection to a port on the sandbox's own loopback (`PORTS`, ADR 0053), without giving the
   * sandbox any network. Core owns the host listener, the token and the bounds. A driver that declares `codeAgent`
   * gets it from the sbx sandbox agent (a `connect` operation, bytes in frames under credit).
   */
  openPortConnection?(request: PortConnectionRequest): Promise<DriverPortConnection>;
  /** Destroys the sandbox. Idempotent. */
  destroy(): Promise<void>;
}
