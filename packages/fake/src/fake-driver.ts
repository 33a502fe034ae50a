import { Bash, InMemoryFs, OverlayFs, ReadWriteFs, type IFileSystem } from "just-bash";
import { ShellScriptRunner } from "./shell-script-runner.js";
import { FileNotFoundError, PathError, ProviderError, SandboxNotFoundError, type FileEntry, type Mount, type SandboxSnapshot } from "@sbx/core";
import type {
  CodeRequest,
  DriverAudit,
  DriverExecution,
  ProbeAnswer,
  ResolvedCreateOptions,
  SandboxDriverV1,
  SpawnedProcess,
  SpawnRequest,
  DriverFileWatch,
  WatchFilesRequest,
} from "@sbx/core/adapter";
import type { CallRecord } from "./call-record.js";
import { createEgressFetch } from "./egress-fetch.js";
import type { FaultInjector } from "./fault-injector.js";
import { handlerMatches, type ResolvedFakeSettings } from "./fake-settings.js";
import type { PythonInterpreters } from "./python-interpreters.js";
import type { PythonEntry, PythonRoot } from "./python-runtime.js";
import { WatchedFileSystem } from "./watched-file-system.js";
import { fakeSnapshots } from "./fake-snapshots.js";

/** Exit code reported for a killed command: 128 + SIGKILL. */
const KILLED_EXIT_CODE = 137;

/** Everything a driver needs from its provider. */
export interface FakeDriverOptions {
  readonly id: string;
  readonly options: ResolvedCreateOptions;
  readonly settings: ResolvedFakeSettings;
  readonly statefulCode: boolean;
  readonly calls: CallRecord;
  readonly faults: FaultInjector;
  readonly python: () => PythonInterpreters;
  readonly audit: DriverAudit;
  readonly onDestroyed: (id: string) => void;
}

const encoder = new TextEncoder();

/** Exit status and message of a command whose working directory is missing: what `sh` prints on Docker (`cd -- "$cwd" || exit 126`). */
const MISSING_WORKING_DIRECTORY_EXIT_CODE = 126;

/** Turns a just-bash filesystem error (plain `Error("ENOENT: ...")`) into the matching sbx error. */
function translateFileError(error: unknown, path: string): unknown {
  const message = error instanceof Error ? error.message : String(error);
  const code = /^([A-Z]+):/.exec(message)?.[1];
  switch (code) {
    case "ENOENT":
      return new FileNotFoundError({ path, backend: "fake", cause: error });
    case "EISDIR":
      return new PathError({
        path,
        reason: "is-a-directory",
        backend: "fake",
        cause: error,
        message: `Refused path ${JSON.stringify(path)}: it is a directory.`,
      });
    case "ENOTDIR":
      return new PathError({
        path,
        reason: "not-a-directory",
        backend: "fake",
        cause: error,
        message: `Refused path ${JSON.stringify(path)}: a parent is not a directory.`,
      });
    case "EEXIST":
      return new PathError({
        path,
        reason: "exists",
        backend: "fake",
        cause: error,
        message: `Refused path ${JSON.stringify(path)}: it already exists.`,
      });
    case "ENOTEMPTY":
      return new PathError({
        path,
        reason: "not-empty",
        backend: "fake",
        cause: error,
        message: `Refused path ${JSON.stringify(path)}: the directory is not empty; pass { recursive: true }.`,
      });
    case "EROFS":
    case "EACCES":
    case "EPERM":
      return new PathError({
        path,
        reason: "read-only",
        backend: "fake",
        cause: error,
        message: `Refused path ${JSON.stringify(path)}: it is on a read-only mount.`,
      });
    default:
      return new ProviderError({ backend: "fake", cause: error, message: `The fake backend's filesystem failed on ${path}: ${message}` });
  }
}

/** One in-process sandbox: a just-bash shell over an in-memory filesystem with host mounts, and Pyodide for code. */
export class FakeDriver implements SandboxDriverV1 {
  readonly id: string;
  readonly workspace: string;
  readonly audit: DriverAudit;
  readonly createCodeContext?: SandboxDriverV1["createCodeContext"];
  private readonly bash: Bash;
  private readonly shell: ShellScriptRunner;
  private readonly fs: WatchedFileSystem;
  private readonly processes = new Set<SpawnedProcess>();
  /** The stops of running file watches, called when the sandbox is destroyed. */
  private readonly watchStops = new Set<() => void>();
  private readonly contexts: string[] = [];
  private readonly secrets: string[];
  private lifetimeTimer: NodeJS.Timeout;
  private nextPid = 100;
  private destroyed = false;
  private expiredByTimer = false;
  /**
   * When the lifetime ends, fixed before the shell exists: just-bash's own execution deadline (the same length)
   * starts later, so a command it stops is always past this instant, and is reported as the lost sandbox it is
   * even when the lifetime timer has not run yet on a loaded event loop.
   */
  private expiresAt: number;

  constructor(private readonly config: FakeDriverOptions) {
    const { options, settings } = config;
    this.expiresAt = Date.now() + options.timeoutMs;
    this.id = config.id;
    this.workspace = settings.workspace;
    this.audit = config.audit;
    this.secrets = Object.values(options.secrets).filter((value) => value.length > 0);
    this.fs = new WatchedFileSystem({ base: new InMemoryFs() });
    for (const mount of options.mounts) this.fs.mount(mount.sandboxPath, mountFilesystem(mount));
    this.shell = new ShellScriptRunner(this.fs);
    this.bash = new Bash({
      fs: this.shell.fileSystem,
      cwd: this.workspace,
      env: { HOME: this.workspace, USER: "user", LANG: "C.UTF-8" },
      python: true,
      customCommands: this.shell.commands,
      fetch: createEgressFetch(options.network),
      processInfo: { pid: 1, ppid: 0 },
      executionLimits: {
        maxExecutionTimeMs: options.timeoutMs,
        maxPythonTimeoutMs: options.timeoutMs,
        maxCommandCount: 10_000_000,
        maxLoopIterations: 100_000_000,
      },
    });
    this.shell.attach(this.bash);
    if (config.statefulCode) this.createCodeContext = (request) => this.newCodeContext(request);
    this.lifetimeTimer = this.startLifetimeTimer(options.timeoutMs);
  }

  private startLifetimeTimer(milliseconds: number): NodeJS.Timeout {
    const timer = setTimeout(() => {
      this.expiredByTimer = true;
      void this.destroy();
    }, milliseconds);
    timer.unref();
    return timer;
  }

  /**
   * Moves the end of the sandbox's lifetime (ADR 0050): the in-process timer restarted. A command already running
   * keeps just-bash's own execution limit, fixed at create to the first lifetime.
   */
  async setLifetime(request: { expiresAt: string }): Promise<{ expiresAt: string }> {
    this.ensureAvailable();
    const expiresAt = Date.parse(request.expiresAt);
    clearTimeout(this.lifetimeTimer);
    this.expiresAt = expiresAt;
    this.lifetimeTimer = this.startLifetimeTimer(Math.max(0, expiresAt - Date.now()));
    return { expiresAt: new Date(expiresAt).toISOString() };
  }

  /**
   * Takes a snapshot (ADR 0056): a copy of this sandbox's in-memory file system (the workspace, /tmp and every other
   * path it wrote), without the host mounts. Present when `SNAPSHOTS` is on.
   */
  async snapshot(): Promise<SandboxSnapshot> {
    this.ensureAvailable();
    return fakeSnapshots.take(
      this.fs,
      this.config.options.mounts.map((mount) => mount.sandboxPath),
    );
  }

  /** Whether the sandbox's lifetime has ended (by its timer, or by the clock before the timer ran). */
  private get expired(): boolean {
    return this.expiredByTimer || Date.now() >= this.expiresAt;
  }

  /** Creates the workspace, /tmp and the seed files. */
  async initialise(): Promise<void> {
    await this.fs.mkdir(this.workspace, { recursive: true });
    await this.fs.mkdir("/tmp", { recursive: true });
    for (const [path, content] of Object.entries(this.config.settings.files)) {
      const absolute = path.startsWith("/") ? path : `${this.workspace}/${path}`;
      await this.fs.mkdir(absolute.slice(0, absolute.lastIndexOf("/")) || "/", { recursive: true });
      await this.fs.writeFile(absolute, content);
    }
    // A create from a snapshot (ADR 0056) starts with its files; everything else is this create's own.
    if (this.config.options.fromSnapshot !== undefined) await fakeSnapshots.restore(this.config.options.fromSnapshot, this.fs);
  }

  private record(
    kind: "command" | "runCode" | "createCodeContext" | "file" | "kill",
    operation: string,
    parameters: Record<string, unknown>,
    extraSecrets: readonly string[] = [],
  ): void {
    this.config.calls.add(kind, this.id, operation, parameters, [...this.secrets, ...extraSecrets]);
  }

  private ensureAvailable(): void {
    if (this.config.faults.isLost(this.id) || this.expired) {
      throw new SandboxNotFoundError({
        sandboxId: this.id,
        backend: "fake",
        message: `Sandbox ${this.id} no longer exists (it expired, was lost or was killed).`,
      });
    }
    if (this.destroyed) throw new SandboxNotFoundError({ sandboxId: this.id, backend: "fake", message: `Sandbox ${this.id} was destroyed.` });
  }

  /** Kills every running process (used when the sandbox is lost). */
  killAll(): void {
    for (const process of this.processes) void process.kill();
  }

  async spawn(request: SpawnRequest): Promise<SpawnedProcess> {
    this.ensureAvailable();
    this.record("command", "spawn", { command: request.command, cwd: request.cwd, env: request.env, stdin: request.stdin }, request.secretValues);
    this.config.faults.takeCommandTimeout();
    const pid = String(this.nextPid++);
    const controller = new AbortController();
    const stdinChunks: Uint8Array[] = [];
    let stdinOpen = request.stdin;
    let killed = false;
    let begun = false;
    let settled = false;
    const jobs: Array<Promise<void>> = [];
    let resolveExit!: (value: { exitCode: number }) => void;
    const exit = new Promise<{ exitCode: number }>((resolve) => {
      resolveExit = resolve;
    });
    const settle = (value: { exitCode: number }) => {
      if (settled) return;
      settled = true;
      resolveExit(value);
    };
    const handler = this.config.settings.handlers.commands.find((candidate) => handlerMatches(candidate.match, request.command));

    const begin = () => {
      if (begun) return;
      begun = true;
      const stdin = Buffer.concat(stdinChunks).toString("latin1");
      void (async () => {
        if (handler) {
          const response = await handler.respond({
            command: request.command,
            cwd: request.cwd,
            env: request.env,
            stdin: Buffer.from(stdin, "latin1").toString("utf8"),
            sandboxId: this.id,
          });
          if (killed) return;
          if (response.stdout) request.onStdout(encoder.encode(response.stdout));
          if (response.stderr) request.onStderr(encoder.encode(response.stderr));
          settle({ exitCode: response.exitCode ?? 0 });
          return;
        }
        if (!(await this.isDirectory(request.cwd))) {
          request.onStderr(encoder.encode(`sh: 1: cd: can't cd to ${request.cwd}\n`));
          settle({ exitCode: killed ? KILLED_EXIT_CODE : MISSING_WORKING_DIRECTORY_EXIT_CODE });
          return;
        }
        let exitCode: number;
        try {
          exitCode = await this.shell.run({
            script: request.command,
            cwd: request.cwd,
            env: { HOME: this.workspace, ...request.env },
            stdin,
            signal: controller.signal,
            // A background job writing after its command returned: nobody is listening.
            onStdout: (bytes) => {
              if (!settled) request.onStdout(bytes);
            },
            onStderr: (bytes) => {
              if (!settled) request.onStderr(bytes);
            },
            onJob: (job) => jobs.push(job),
          });
        } catch (error) {
          // just-bash rejects on some filesystem errors (for example EROFS through a redirection).
          if (!killed) request.onStderr(encoder.encode(`bash: ${error instanceof Error ? error.message : String(error)}\n`));
          exitCode = 1;
        }
        settle({ exitCode: killed ? KILLED_EXIT_CODE : exitCode });
      })().catch((error) => {
        request.onStderr(encoder.encode(`fake: ${error instanceof Error ? error.message : String(error)}\n`));
        settle({ exitCode: killed ? KILLED_EXIT_CODE : 1 });
      });
    };

    const process: SpawnedProcess = {
      pid,
      // A sandbox lost while the command ran fails the wait, as a vanished container or VM does.
      exit: exit.then((value) => {
        if (this.config.faults.isLost(this.id) || this.expired) this.ensureAvailable();
        return value;
      }),
      writeStdin: async (data) => {
        this.ensureAvailable();
        if (!stdinOpen) throw new ProviderError({ backend: "fake", message: "stdin is closed." });
        stdinChunks.push(data.slice());
      },
      closeStdin: async () => {
        stdinOpen = false;
        begin();
      },
      kill: async () => {
        if (killed) return;
        killed = !settled;
        controller.abort();
        if (!begun || handler) settle({ exitCode: KILLED_EXIT_CODE });
      },
    };
    this.processes.add(process);
    // Background jobs may outlive the command (as in a real shell); the process stays killable until they end.
    void exit.then(async () => {
      for (let index = 0; index < jobs.length; index++) await jobs[index];
      this.processes.delete(process);
    });
    // Commands read their whole standard input up front (just-bash takes stdin as one string), so a command
    // with open stdin starts when stdin is closed.
    if (!request.stdin) begin();
    return process;
  }

  private async isDirectory(path: string): Promise<boolean> {
    try {
      return (await this.fs.stat(path)).isDirectory;
    } catch {
      return false;
    }
  }

  private async newCodeContext(request: { language: string; cwd: string; signal?: AbortSignal }): Promise<{ id: string; language: string }> {
    this.ensureAvailable();
    const contextId = `${this.id}-context-${this.contexts.length + 1}-${crypto.randomUUID().slice(0, 8)}`;
    this.record("createCodeContext", "createCodeContext", { language: request.language, contextId });
    await this.config.python().createContext(contextId, { preload: this.config.settings.preloadPython });
    this.contexts.push(contextId);
    return { id: contextId, language: request.language };
  }

  async runCode(request: CodeRequest): Promise<DriverExecution> {
    this.ensureAvailable();
    this.record("runCode", "runCode", { code: request.code, language: request.language, contextId: request.contextId ?? null, cwd: request.cwd });
    this.config.faults.takeCodeTimeout();
    const handler = this.config.settings.handlers.code.find((candidate) => handlerMatches(candidate.match, request.code));
    if (handler) {
      const response = await handler.respond({ code: request.code, language: request.language, contextId: request.contextId, sandboxId: this.id });
      if (response.stdout) request.onStdout(response.stdout);
      if (response.stderr) request.onStderr(response.stderr);
      return { error: response.error ?? null, results: null };
    }
    if (request.contextId !== undefined && !this.contexts.includes(request.contextId)) {
      throw new ProviderError({ backend: "fake", message: `No code context ${request.contextId} in sandbox ${this.id}.` });
    }
    const roots = await this.snapshotRoots();
    const stdoutDecoder = new TextDecoder();
    const stderrDecoder = new TextDecoder();
    const outcome = await this.config.python().run({
      code: request.code,
      contextId: request.contextId ?? null,
      cwd: request.cwd,
      env: { HOME: this.workspace, ...request.env },
      roots,
      policy: this.config.options.network,
      signal: request.signal,
      onStdout: (chunk) => request.onStdout(stdoutDecoder.decode(chunk, { stream: true })),
      onStderr: (chunk) => request.onStderr(stderrDecoder.decode(chunk, { stream: true })),
    });
    if (this.config.faults.isLost(this.id)) this.ensureAvailable();
    if (!this.destroyed) await this.applyRoots(roots, outcome.roots);
    return { error: outcome.error, results: null };
  }

  /** The folders Python sees: the workspace, /tmp and every mount (read-only mounts stay read-only). */
  private async snapshotRoots(): Promise<PythonRoot[]> {
    const readOnlyMounts = this.config.options.mounts.filter((mount) => mount.readOnly).map((mount) => mount.sandboxPath);
    const isReadOnly = (path: string) => readOnlyMounts.some((mount) => path === mount || path.startsWith(`${mount}/`));
    const paths = new Map<string, boolean>([
      [this.workspace, false],
      ["/tmp", false],
    ]);
    for (const mount of this.config.options.mounts) paths.set(mount.sandboxPath, mount.readOnly);
    const roots: PythonRoot[] = [];
    for (const [path, readOnly] of paths) {
      const entries: PythonEntry[] = [];
      await this.walk(path, entries, (candidate) => candidate !== path && !readOnly && isReadOnly(candidate));
      roots.push({ path, readOnly, entries });
    }
    return roots;
  }

  private async walk(path: string, entries: PythonEntry[], skip: (path: string) => boolean): Promise<void> {
    let stat;
    try {
      stat = await this.fs.lstat(path);
    } catch {
      return;
    }
    if (skip(path)) return;
    if (stat.isDirectory) {
      entries.push({ path, kind: "dir" });
      for (const name of await this.fs.readdir(path)) await this.walk(path === "/" ? `/${name}` : `${path}/${name}`, entries, skip);
    } else if (stat.isFile) entries.push({ path, kind: "file", data: await this.fs.readFileBuffer(path) });
  }

  /** Copies what Python changed back into the shell's filesystem. */
  private async applyRoots(before: readonly PythonRoot[], after: readonly PythonRoot[]): Promise<void> {
    const readOnlyMounts = this.config.options.mounts.filter((mount) => mount.readOnly).map((mount) => mount.sandboxPath);
    const isReadOnly = (path: string) => readOnlyMounts.some((mount) => path === mount || path.startsWith(`${mount}/`));
    for (const root of after) {
      const previous = new Map((before.find((candidate) => candidate.path === root.path)?.entries ?? []).map((entry) => [entry.path, entry]));
      const present = new Set<string>();
      for (const entry of root.entries) {
        present.add(entry.path);
        if (isReadOnly(entry.path)) continue;
        const old = previous.get(entry.path);
        try {
          if (entry.kind === "dir") {
            if (!old || old.kind !== "dir") {
              if (old) await this.fs.rm(entry.path, { force: true });
              await this.fs.mkdir(entry.path, { recursive: true });
            }
          } else if (!old || old.kind !== "file" || !Buffer.from(old.data!).equals(Buffer.from(entry.data!))) {
            if (old && old.kind === "dir") await this.fs.rm(entry.path, { recursive: true, force: true });
            await this.fs.writeFile(entry.path, entry.data!);
          }
        } catch {
          // Best effort: a write the shell's filesystem refuses (for example on a read-only mount) is dropped.
        }
      }
      for (const [path] of previous) {
        if (present.has(path) || isReadOnly(path)) continue;
        await this.fs.rm(path, { recursive: true, force: true }).catch(() => {});
      }
    }
  }

  private inside(resolved: string): boolean {
    return resolved === this.workspace || resolved.startsWith(`${this.workspace}/`);
  }

  /**
   * The file policy of ADR 0020: resolves the deepest existing ancestor of `path` (and, with `followFinal`, a final
   * symbolic link) and refuses with `PathError("escapes-workspace")` when it lies outside the workspace. Returns the
   * resolved path every operation then uses.
   */
  private async confined(path: string, followFinal: boolean): Promise<string> {
    const escapes = () =>
      new PathError({
        path,
        reason: "escapes-workspace",
        backend: "fake",
        message: `Refused path ${JSON.stringify(path)}: a symbolic link on it leads outside the workspace.`,
      });
    if (path === this.workspace) return path;
    const name = path.slice(path.lastIndexOf("/") + 1);
    let ancestor = path.slice(0, path.lastIndexOf("/")) || "/";
    while (
      !(await this.fs.lstat(ancestor).then(
        () => true,
        () => false,
      ))
    )
      ancestor = ancestor.slice(0, ancestor.lastIndexOf("/")) || "/";
    const resolvedAncestor = await this.fs.realpath(ancestor).catch(() => {
      throw escapes();
    });
    if (!this.inside(resolvedAncestor)) throw escapes();
    const parent = path.slice(0, path.lastIndexOf("/")) || "/";
    const resolvedParent = parent === ancestor ? resolvedAncestor : resolvedAncestor + parent.slice(ancestor.length);
    const resolved = resolvedParent === "/" ? `/${name}` : `${resolvedParent}/${name}`;
    if (!followFinal) return resolved;
    const stat = await this.fs.lstat(resolved).catch(() => undefined);
    if (!stat?.isSymbolicLink) return resolved;
    const target = await this.fs.realpath(resolved).catch(() => {
      throw escapes();
    });
    if (!this.inside(target)) throw escapes();
    return target;
  }

  async readFile(path: string): Promise<ReadableStream<Uint8Array>> {
    this.ensureAvailable();
    this.record("file", "readFile", { path });
    const target = await this.confined(path, true);
    const resolved = await this.fs.stat(target).catch((error) => {
      throw translateFileError(error, path);
    });
    if (resolved.isDirectory)
      throw new PathError({
        path,
        reason: "is-a-directory",
        backend: "fake",
        message: `Refused to read ${JSON.stringify(path)}: it is a directory.`,
      });
    if (!resolved.isFile)
      throw new PathError({
        path,
        reason: "not-a-regular-file",
        backend: "fake",
        message: `Refused path ${JSON.stringify(path)}: it is not a regular file.`,
      });
    const bytes = await this.fs.readFileBuffer(target).catch((error) => {
      throw translateFileError(error, path);
    });
    return new ReadableStream<Uint8Array>({
      start(controller) {
        const chunkSize = 64 * 1024;
        for (let offset = 0; offset < bytes.byteLength; offset += chunkSize) controller.enqueue(bytes.slice(offset, offset + chunkSize));
        controller.close();
      },
    });
  }

  async writeFile(path: string, data: ReadableStream<Uint8Array>, options: { signal?: AbortSignal }): Promise<void> {
    this.ensureAvailable();
    const chunks: Uint8Array[] = [];
    const reader = data.getReader();
    for (;;) {
      options.signal?.throwIfAborted();
      const { value, done } = await reader.read();
      if (done) break;
      chunks.push(value);
    }
    const bytes = new Uint8Array(Buffer.concat(chunks));
    this.record("file", "writeFile", { path, bytes: bytes.byteLength });
    const target = await this.confined(path, false);
    const existing = await this.fs.lstat(target).catch(() => undefined);
    if (existing?.isDirectory) throw translateFileError(new Error("EISDIR: is a directory"), path);
    const parent = target.slice(0, target.lastIndexOf("/")) || "/";
    await this.fs.mkdir(parent, { recursive: true }).catch((error) => {
      // A file where a parent folder must be is not-a-directory, as core's file helper says on every other backend.
      const translated = translateFileError(error, path);
      if (translated instanceof PathError && translated.reason === "exists") throw translateFileError(new Error("ENOTDIR: not a directory"), path);
      throw translated;
    });
    // A final symbolic link is replaced, never written through (ADR 0020).
    if (existing?.isSymbolicLink)
      await this.fs.rm(target, { force: true }).catch((error) => {
        throw translateFileError(error, path);
      });
    await this.fs.writeFile(target, bytes).catch((error) => {
      throw translateFileError(error, path);
    });
  }

  private async entry(path: string, shownPath = path): Promise<FileEntry> {
    const stat = await this.fs.lstat(path).catch((error) => {
      throw translateFileError(error, shownPath);
    });
    return {
      name: shownPath.slice(shownPath.lastIndexOf("/") + 1),
      path: shownPath,
      type: stat.isSymbolicLink ? "symlink" : stat.isDirectory ? "directory" : stat.isFile ? "file" : "other",
      size: stat.isDirectory ? 0 : stat.size,
      modifiedAt: stat.mtime instanceof Date ? stat.mtime : null,
    };
  }

  async list(path: string): Promise<FileEntry[]> {
    this.ensureAvailable();
    this.record("file", "list", { path });
    const target = await this.confined(path, true);
    const info = await this.entry(target, path);
    if (info.type !== "directory")
      throw new PathError({
        path,
        reason: "not-a-directory",
        backend: "fake",
        message: `Refused path ${JSON.stringify(path)}: it is not a directory.`,
      });
    const names = await this.fs.readdir(target).catch((error) => {
      throw translateFileError(error, path);
    });
    return Promise.all(names.sort().map((name) => this.entry(`${target}/${name}`, path === "/" ? `/${name}` : `${path}/${name}`)));
  }

  async stat(path: string, options: { followSymlinks?: boolean } = {}): Promise<FileEntry> {
    this.ensureAvailable();
    const followSymlinks = options.followSymlinks === true;
    this.record("file", "stat", followSymlinks ? { path, followSymlinks } : { path });
    const target = await this.confined(path, false);
    if (!followSymlinks) return this.entry(target, path);
    return this.entry(await this.linkDestination(target, path), path);
  }

  /**
   * Where a final symbolic link at `target` leads, confined like `stat -L` on the other backends (ADR 0046): the
   * path itself when it is no link, `PathError("escapes-workspace")` for a destination outside the workspace, and
   * `FileNotFoundError` for a link to nothing inside it.
   */
  private async linkDestination(target: string, path: string): Promise<string> {
    const link = await this.fs.lstat(target).catch((error) => {
      throw translateFileError(error, path);
    });
    if (!link.isSymbolicLink) return target;
    const escapes = new PathError({
      path,
      reason: "escapes-workspace",
      backend: "fake",
      message: `Refused path ${JSON.stringify(path)}: a symbolic link on it leads outside the workspace.`,
    });
    const destination = await this.fs.realpath(target).catch(() => undefined);
    if (destination !== undefined) {
      if (!this.inside(destination)) throw escapes;
      return destination;
    }
    // A link to nothing: outside the workspace it is refused, inside it is a missing file.
    const written = await this.fs.readlink(target).catch(() => "");
    if (written.startsWith("/") && !this.inside(written.replace(/\/+$/, ""))) throw escapes;
    throw new FileNotFoundError({ path, backend: "fake" });
  }

  async remove(path: string, options: { recursive: boolean }): Promise<void> {
    this.ensureAvailable();
    this.record("file", "remove", { path, recursive: options.recursive });
    const target = await this.confined(path, false);
    const info = await this.entry(target, path);
    // A folder without `recursive` is refused, empty or not (ADR 0020).
    if (info.type === "directory" && !options.recursive)
      throw new PathError({
        path,
        reason: "is-a-directory",
        backend: "fake",
        message: `Cannot remove ${JSON.stringify(path)}: it is a directory; pass { recursive: true }.`,
      });
    await this.fs.rm(target, { recursive: options.recursive }).catch((error) => {
      throw translateFileError(error, path);
    });
  }

  async mkdir(path: string): Promise<void> {
    this.ensureAvailable();
    this.record("file", "mkdir", { path });
    const target = await this.confined(path, true);
    const existing = await this.fs.lstat(target).catch(() => undefined);
    if (existing && !existing.isDirectory)
      throw new PathError({
        path,
        reason: "not-a-directory",
        backend: "fake",
        message: `Refused path ${JSON.stringify(path)}: a file stands where the directory should be.`,
      });
    await this.fs.mkdir(target, { recursive: true }).catch((error) => {
      throw translateFileError(error, path);
    });
  }

  async rename(from: string, to: string): Promise<void> {
    this.ensureAvailable();
    this.record("file", "rename", { from, to });
    const source = await this.confined(from, false);
    const destination = await this.confined(to, false);
    await this.fs.lstat(source).catch((error) => {
      throw translateFileError(error, from);
    });
    const parent = destination.slice(0, destination.lastIndexOf("/")) || "/";
    await this.fs.mkdir(parent, { recursive: true }).catch((error) => {
      throw translateFileError(error, parent);
    });
    await this.fs.mv(source, destination).catch((error) => {
      throw translateFileError(error, from);
    });
  }

  /**
   * Watches a directory of the in-memory file system (ADR 0049): events come from the file system's own mutations, by
   * the shell, Python or the files API, in order. A path whose links lead out of the workspace is refused like every
   * file call; events name paths as the caller gave the watched directory.
   */
  async watchFiles(request: WatchFilesRequest): Promise<DriverFileWatch> {
    this.ensureAvailable();
    this.record("file", "watchFiles", { path: request.path, recursive: request.recursive });
    const target = await this.confined(request.path, true);
    const info = await this.entry(target, request.path);
    if (info.type !== "directory")
      throw new PathError({
        path: request.path,
        reason: "not-a-directory",
        backend: "fake",
        message: `Refused to watch ${JSON.stringify(request.path)}: it is not a directory.`,
      });
    const shown = (path: string) => request.path + path.slice(target.length);
    const stop = this.fs.watch({
      directory: target,
      recursive: request.recursive,
      onEvent: (event) =>
        request.onEvent(
          event.from === undefined ? { ...event, path: shown(event.path) } : { ...event, path: shown(event.path), from: shown(event.from) },
        ),
    });
    this.watchStops.add(stop);
    return {
      stop: async () => {
        this.watchStops.delete(stop);
        stop();
      },
    };
  }

  /**
   * Whether the sandbox still exists, for core's lost-sandbox rule (ADR 0037): `"gone"` once it was lost (a fault),
   * its lifetime ended or it was destroyed, else `"running"`. The fake always knows.
   */
  async probe(): Promise<ProbeAnswer> {
    return this.config.faults.isLost(this.id) || this.expired || this.destroyed ? "gone" : "running";
  }

  async destroy(): Promise<void> {
    if (this.destroyed) return;
    this.destroyed = true;
    clearTimeout(this.lifetimeTimer);
    this.record("kill", "destroy", {});
    for (const stop of this.watchStops) stop();
    this.watchStops.clear();
    await Promise.allSettled([...this.processes].map((process) => process.kill()));
    if (this.contexts.length > 0) this.config.python().dropContexts(this.contexts);
    this.config.onDestroyed(this.id);
  }
}

function mountFilesystem(mount: Mount): IFileSystem {
  return mount.readOnly ? new OverlayFs({ root: mount.hostPath, mountPoint: "/", readOnly: true }) : new ReadWriteFs({ root: mount.hostPath });
}
