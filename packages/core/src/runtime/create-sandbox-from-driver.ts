import { createReadStream, createWriteStream } from "node:fs";
import { rm, stat as hostStat } from "node:fs/promises";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { AbortedError, CapabilityNotSupportedError, FileNotFoundError, InvalidArgumentError, SandboxClosedError, SbxError, TimeoutError } from "../errors/index.js";
import type { AuditRecord } from "../v1/audit.js";
import { backendsSupporting } from "../v1/backend-registry.js";
import type { CapabilityName } from "../v1/capabilities.js";
import type { CredentialAuditEntry } from "../v1/credentials.js";
import { runCodeOptionsSchema, runCommandOptionsSchema, type ResolvedCreateOptions } from "../v1/options.js";
import type { SandboxDriverV1, SandboxProviderV1, SpawnedProcess } from "../v1/provider.js";
import type { CodeContext, CommandHandle, CommandResult, Execution, RunCodeOptions, RunCommandOptions, Sandbox, SandboxFiles } from "../v1/sandbox.js";
import { callAdapter, redactError, redactText, throwIfAborted } from "./guard.js";
import { DEFAULT_OUTPUT_LIMIT_BYTES, OutputCollector, TextChannel } from "./output-collector.js";
import { resolveWorkingDirectory, resolveWorkspacePath } from "./paths.js";
import { runPythonOneShot } from "./python-one-shot.js";
import { requireString, validate } from "./validate.js";

/** How long to wait for a killed process to report its exit before giving up on it. */
const KILL_GRACE_MS = 10_000;

/**
 * Waits for `work` to settle. Once the work has been told to stop (timeout or abort), waits at most
 * `KILL_GRACE_MS` more and then settles with `fallback`, so a backend that loses track of a killed process
 * cannot hang the caller.
 */
function settleWithinGrace<Value>(work: Promise<Value>, stopping: () => boolean, fallback: Value): Promise<Value> {
  return new Promise<Value>((resolve, reject) => {
    let graceTimer: NodeJS.Timeout | undefined;
    const poll = setInterval(() => {
      if (stopping() && !graceTimer) graceTimer = setTimeout(() => resolve(fallback), KILL_GRACE_MS);
    }, 100);
    poll.unref();
    work.then(resolve, reject).finally(() => {
      clearInterval(poll);
      if (graceTimer) clearTimeout(graceTimer);
    });
  });
}

/** Everything `createSandboxFromDriver` needs besides the driver. */
export interface SandboxContext {
  /** The provider that made the driver. */
  readonly provider: SandboxProviderV1;
  /** The target it was created from. */
  readonly target: string;
  /** The validated options. */
  readonly options: ResolvedCreateOptions;
  /** The sandbox's scoped credentials, for the audit record (see `credential()`). */
  readonly credentials?: { auditEntries(): CredentialAuditEntry[] };
}

/**
 * Wraps an adapter's primitives into the full `Sandbox`: option validation, capability checks, closed-state
 * checks, timeouts that kill, output caps, path confinement, secret redaction and the audit record.
 * Adapters never implement these themselves.
 */
export function createSandboxFromDriver(driver: SandboxDriverV1, context: SandboxContext): Sandbox {
  const { provider, options } = context;
  const backend = provider.backend;
  const capabilities = provider.capabilities;
  const secretValues = Object.values(options.secrets).filter((value) => value.length > 0);
  const baseEnvironment = { ...options.env, ...options.secrets };
  const createdAt = new Date().toISOString();
  let closedAt: string | null = null;
  let killing: Promise<void> | undefined;
  const liveProcesses = new Set<SpawnedProcess>();

  const adapter = <Result>(operation: string, call: () => Promise<Result>) => callAdapter(backend, operation, secretValues, call);

  function ensureOpen(operation: string): void {
    if (closedAt !== null) throw new SandboxClosedError({ sandboxId: driver.id, operation, backend });
  }

  function requireCapability(capability: CapabilityName, detail?: string): void {
    if (!capabilities[capability]) {
      throw new CapabilityNotSupportedError({ capability, backend, supportedBy: backendsSupporting(capability, backend), detail });
    }
  }

  function requireLanguage(language: string): void {
    if (!capabilities.languages.includes(language)) {
      throw new CapabilityNotSupportedError({
        capability: `language:${language}`,
        backend,
        supportedBy: backendsSupporting(`language:${language}`, backend),
        detail: `runCode accepts ${capabilities.languages.length > 0 ? capabilities.languages.join(", ") : "no languages"} here`,
      });
    }
  }

  function toBytes(data: string | Uint8Array): Uint8Array {
    return typeof data === "string" ? new TextEncoder().encode(data) : data;
  }

  /** Starts a process with output collection, timeout and abort handling; returns a handle-like object. */
  async function launch(command: string, rawOptions: RunCommandOptions | undefined, background: boolean) {
    ensureOpen(background ? "start a command" : "run a command");
    requireString(command, "command");
    const runOptions = validate(runCommandOptionsSchema, rawOptions ?? {}, "options") as RunCommandOptions;
    if (runOptions.stdin !== undefined) requireCapability("STDIN");
    if (runOptions.stdin === true && !background) {
      throw new InvalidArgumentError({ field: "options.stdin", backend, message: "Invalid options.stdin: `true` (keep stdin open) only applies to commands.start(); pass the input as text or bytes to run()." });
    }
    throwIfAborted(runOptions.signal, backend);
    const limit = runOptions.outputLimitBytes ?? DEFAULT_OUTPUT_LIMIT_BYTES;
    const stdout = new OutputCollector(limit);
    const stderr = new OutputCollector(limit);
    if (runOptions.onStdout) stdout.onText(runOptions.onStdout);
    if (runOptions.onStderr) stderr.onText(runOptions.onStderr);
    const stdoutChannel = new TextChannel(limit);
    const stderrChannel = new TextChannel(limit);
    if (background) {
      stdout.onText((text) => stdoutChannel.push(text));
      stderr.onText((text) => stderrChannel.push(text));
    }
    const started = Date.now();
    const environment = { ...baseEnvironment, ...(runOptions.env ?? {}) };
    const process = await adapter("spawn", () =>
      driver.spawn({
        command,
        cwd: resolveWorkingDirectory(runOptions.cwd, driver.workspace, backend),
        env: environment,
        stdin: runOptions.stdin !== undefined,
        onStdout: (chunk) => stdout.push(chunk),
        onStderr: (chunk) => stderr.push(chunk),
      }),
    );
    liveProcesses.add(process);

    let stopReason: "timeout" | "abort" | undefined;
    let timer: NodeJS.Timeout | undefined;
    let markStopped: () => void = () => {};
    const stopped = new Promise<void>((resolve) => (markStopped = resolve));
    const stop = (reason: "timeout" | "abort") => {
      if (stopReason) return;
      stopReason = reason;
      markStopped();
      void process.kill().catch(() => {});
    };
    if (runOptions.timeoutMs !== undefined) timer = setTimeout(() => stop("timeout"), runOptions.timeoutMs);
    const onAbort = () => stop("abort");
    runOptions.signal?.addEventListener("abort", onAbort, { once: true });
    // The signal may have fired while the backend was starting the process; that abort must still kill it.
    if (runOptions.signal?.aborted) stop("abort");

    const finished: Promise<CommandResult> = (async () => {
      try {
        if (runOptions.stdin !== undefined && runOptions.stdin !== true) {
          const input = toBytes(runOptions.stdin);
          // Written under the timeout and abort: a command that never reads its stdin must not hang the caller.
          const writing = adapter("write stdin", async () => {
            if (input.byteLength > 0) await process.writeStdin(input);
            await process.closeStdin();
          });
          await Promise.race([writing, stopped]).catch((error) => {
            if (stopReason) return;
            void process.kill().catch(() => {});
            throw error;
          });
          writing.catch(() => {});
        }
        const exit = await adapter("wait for a command", () => settleWithinGrace(process.exit, () => stopReason !== undefined, { exitCode: 137 }));
        stdout.finish();
        stderr.finish();
        if (stopReason === "timeout") {
          throw new TimeoutError({
            backend,
            timeoutMs: runOptions.timeoutMs!,
            killed: true,
            partialStdout: redactText(stdout.text(), secretValues),
            partialStderr: redactText(stderr.text(), secretValues),
            message: `The command ran past its ${runOptions.timeoutMs} ms timeout; it and every process it started were killed.`,
          });
        }
        if (stopReason === "abort") throw new AbortedError({ backend, cause: runOptions.signal?.reason, message: "The command was aborted by the caller; it and every process it started were killed." });
        return {
          exitCode: exit.exitCode,
          stdout: stdout.text(),
          stderr: stderr.text(),
          stdoutBytes: stdout.bytes(),
          stderrBytes: stderr.bytes(),
          durationMs: Date.now() - started,
          truncated: { stdout: stdout.truncated, stderr: stderr.truncated },
          totalBytes: { stdout: stdout.totalBytes, stderr: stderr.totalBytes },
          outOfMemoryKilled: exit.outOfMemoryKilled ?? null,
        };
      } finally {
        if (timer) clearTimeout(timer);
        runOptions.signal?.removeEventListener("abort", onAbort);
        liveProcesses.delete(process);
        stdoutChannel.end();
        stderrChannel.end();
      }
    })();
    return { process, finished, stdoutChannel, stderrChannel };
  }

  const commands: Sandbox["commands"] = {
    async run(command, runOptions) {
      const { finished } = await launch(command, runOptions, false);
      return finished;
    },
    async start(command, runOptions) {
      ensureOpen("start a command");
      requireCapability("BACKGROUND_COMMANDS");
      const { process, finished, stdoutChannel, stderrChannel } = await launch(command, runOptions, true);
      finished.catch(() => {});
      let stdinOpen = runOptions?.stdin === true;
      const handle: CommandHandle = {
        pid: process.pid,
        wait: () => finished,
        kill: () => adapter("kill a command", () => process.kill()),
        async writeStdin(data) {
          ensureOpen("write to stdin");
          if (!stdinOpen) throw new InvalidArgumentError({ field: "options.stdin", backend, message: "stdin is not open: start the command with { stdin: true } to write to it, and do not write after closeStdin()." });
          await adapter("write stdin", () => process.writeStdin(toBytes(data)));
        },
        async closeStdin() {
          if (!stdinOpen) return;
          stdinOpen = false;
          await adapter("close stdin", () => process.closeStdin());
        },
        stdout: stdoutChannel,
        stderr: stderrChannel,
      };
      return handle;
    },
  };

  async function runCode(code: string, rawOptions?: RunCodeOptions): Promise<Execution> {
    ensureOpen("run code");
    requireString(code === "" ? " " : code, "code");
    const codeOptions = validate(runCodeOptionsSchema, rawOptions ?? {}, "options") as RunCodeOptions;
    const language = codeOptions.language ?? "python";
    if (codeOptions.contextId !== undefined) requireCapability("STATEFUL_CODE", "code contexts");
    requireLanguage(language);
    throwIfAborted(codeOptions.signal, backend);
    let stdout = "";
    let stderr = "";
    const controller = new AbortController();
    let stopReason: "timeout" | "abort" | undefined;
    const stop = (reason: "timeout" | "abort") => {
      if (stopReason) return;
      stopReason = reason;
      controller.abort();
    };
    const timer = codeOptions.timeoutMs !== undefined ? setTimeout(() => stop("timeout"), codeOptions.timeoutMs) : undefined;
    const onAbort = () => stop("abort");
    codeOptions.signal?.addEventListener("abort", onAbort, { once: true });
    const started = Date.now();
    const request = {
      code,
      language,
      contextId: codeOptions.contextId,
      env: baseEnvironment,
      cwd: driver.workspace,
      signal: controller.signal,
      onStdout: (text: string) => {
        stdout += text;
        codeOptions.onStdout?.(text);
      },
      onStderr: (text: string) => {
        stderr += text;
        codeOptions.onStderr?.(text);
      },
    };
    try {
      const outcome = await adapter("run code", () =>
        settleWithinGrace(driver.runCode ? driver.runCode(request) : runPythonOneShot(driver, request), () => stopReason !== undefined, { error: null, results: null }),
      ).catch((error) => {
        if (stopReason) return { error: null, results: null };
        throw error;
      });
      if (stopReason === "timeout") {
        throw new TimeoutError({ backend, timeoutMs: codeOptions.timeoutMs!, killed: true, partialStdout: redactText(stdout, secretValues), partialStderr: redactText(stderr, secretValues), message: `The code ran past its ${codeOptions.timeoutMs} ms timeout and was stopped.` });
      }
      if (stopReason === "abort") throw new AbortedError({ backend, cause: codeOptions.signal?.reason });
      return {
        stdout,
        stderr,
        error: outcome.error,
        results: capabilities.RICH_RESULTS ? (outcome.results ?? []) : null,
        durationMs: Date.now() - started,
      };
    } finally {
      if (timer) clearTimeout(timer);
      codeOptions.signal?.removeEventListener("abort", onAbort);
    }
  }

  async function createCodeContext(contextOptions?: { language?: string; signal?: AbortSignal }): Promise<CodeContext> {
    ensureOpen("create a code context");
    requireCapability("STATEFUL_CODE", "code contexts");
    const language = contextOptions?.language ?? "python";
    requireString(language, "options.language");
    requireLanguage(language);
    throwIfAborted(contextOptions?.signal, backend);
    if (!driver.createCodeContext) throw new CapabilityNotSupportedError({ capability: "STATEFUL_CODE", backend, supportedBy: backendsSupporting("STATEFUL_CODE", backend), detail: "the adapter declares it but does not implement createCodeContext" });
    const created = await adapter("create a code context", () => driver.createCodeContext!({ language, cwd: driver.workspace, signal: contextOptions?.signal }));
    return Object.freeze({ id: created.id, language: created.language });
  }

  const workspacePath = (path: unknown) => resolveWorkspacePath(path, driver.workspace, backend);

  function toStream(data: string | Uint8Array | ReadableStream<Uint8Array> | AsyncIterable<Uint8Array>): ReadableStream<Uint8Array> {
    if (typeof data === "string" || data instanceof Uint8Array) {
      const bytes = toBytes(data);
      return new ReadableStream({ start(controller) { if (bytes.byteLength > 0) controller.enqueue(bytes); controller.close(); } });
    }
    if (data instanceof ReadableStream) return data;
    if (data && typeof (data as AsyncIterable<Uint8Array>)[Symbol.asyncIterator] === "function") {
      return Readable.toWeb(Readable.from(data as AsyncIterable<Uint8Array>)) as ReadableStream<Uint8Array>;
    }
    throw new InvalidArgumentError({ field: "data", backend, message: "Invalid data: expected a string, a Uint8Array, a ReadableStream or an async iterable of Uint8Array." });
  }

  async function readAll(stream: ReadableStream<Uint8Array>): Promise<Uint8Array> {
    const chunks: Uint8Array[] = [];
    let total = 0;
    const reader = stream.getReader();
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      chunks.push(value);
      total += value.byteLength;
    }
    const out = new Uint8Array(total);
    let offset = 0;
    for (const chunk of chunks) {
      out.set(chunk, offset);
      offset += chunk.byteLength;
    }
    return out;
  }

  const files: SandboxFiles = {
    async write(path, data, fileOptions) {
      ensureOpen("write a file");
      const target = workspacePath(path);
      throwIfAborted(fileOptions?.signal, backend);
      const stream = toStream(data);
      await adapter("write a file", () => driver.writeFile(target, stream, { signal: fileOptions?.signal }));
    },
    read: (async (path: string, fileOptions?: { format?: "text" | "bytes" | "stream"; signal?: AbortSignal }) => {
      ensureOpen("read a file");
      const target = workspacePath(path);
      const format = fileOptions?.format ?? "text";
      if (!["text", "bytes", "stream"].includes(format)) throw new InvalidArgumentError({ field: "options.format", backend, message: `Invalid options.format: expected "text", "bytes" or "stream", got ${JSON.stringify(format)}.` });
      throwIfAborted(fileOptions?.signal, backend);
      const stream = await adapter("read a file", () => driver.readFile(target, { signal: fileOptions?.signal }));
      if (format === "stream") return stream;
      const bytes = await adapter("read a file", () => readAll(stream));
      return format === "bytes" ? bytes : new TextDecoder().decode(bytes);
    }) as SandboxFiles["read"],
    async list(path, fileOptions) {
      ensureOpen("list a directory");
      const target = workspacePath(path);
      return adapter("list a directory", () => driver.list(target, { signal: fileOptions?.signal }));
    },
    async stat(path, fileOptions) {
      ensureOpen("stat a file");
      const target = workspacePath(path);
      return adapter("stat a file", () => driver.stat(target, { signal: fileOptions?.signal }));
    },
    async exists(path, fileOptions) {
      ensureOpen("check a file");
      const target = workspacePath(path);
      try {
        await adapter("stat a file", () => driver.stat(target, { signal: fileOptions?.signal }));
        return true;
      } catch (error) {
        if (SbxError.isInstance(error) && error.code === "SBX_FILE_NOT_FOUND") return false;
        throw error;
      }
    },
    async remove(path, fileOptions) {
      ensureOpen("remove a file");
      const target = workspacePath(path);
      if (target === driver.workspace) throw new InvalidArgumentError({ field: "path", backend, message: "Refusing to remove the workspace itself; remove its entries instead." });
      await adapter("remove a file", () => driver.remove(target, { recursive: fileOptions?.recursive ?? false, signal: fileOptions?.signal }));
    },
    async mkdir(path, fileOptions) {
      ensureOpen("make a directory");
      const target = workspacePath(path);
      await adapter("make a directory", () => driver.mkdir(target, { signal: fileOptions?.signal }));
    },
    async rename(from, to, fileOptions) {
      ensureOpen("rename a file");
      const source = workspacePath(from);
      const destination = workspacePath(to);
      await adapter("rename a file", () => driver.rename(source, destination, { signal: fileOptions?.signal }));
    },
    async upload(hostPath, sandboxPath, fileOptions) {
      ensureOpen("upload a file");
      requireString(hostPath, "hostPath");
      const target = workspacePath(sandboxPath);
      const info = await hostStat(hostPath).catch(() => undefined);
      if (!info?.isFile()) throw new InvalidArgumentError({ field: "hostPath", backend, message: `Invalid hostPath: ${hostPath} is not a readable regular file on the host.` });
      const stream = Readable.toWeb(createReadStream(hostPath, { highWaterMark: 1024 * 1024 })) as ReadableStream<Uint8Array>;
      await adapter("upload a file", () => driver.writeFile(target, stream, { signal: fileOptions?.signal, sizeBytes: info.size }));
    },
    async download(sandboxPath, hostPath, fileOptions) {
      ensureOpen("download a file");
      requireString(hostPath, "hostPath");
      const source = workspacePath(sandboxPath);
      const stream = await adapter("download a file", () => driver.readFile(source, { signal: fileOptions?.signal }));
      try {
        await pipeline(Readable.fromWeb(stream as import("node:stream/web").ReadableStream<Uint8Array>), createWriteStream(hostPath), { signal: fileOptions?.signal });
      } catch (error) {
        await rm(hostPath, { force: true });
        if (SbxError.isInstance(error)) throw error;
        if (fileOptions?.signal?.aborted) throw new AbortedError({ backend });
        throw redactError(error, secretValues);
      }
    },
  };

  function audit(): AuditRecord {
    const record: AuditRecord = {
      specificationVersion: "sbx-audit-v1",
      backend,
      backendVersion: driver.audit.backendVersion,
      sandboxId: driver.id,
      target: context.target,
      createdAt,
      closedAt,
      isolating: provider.isolating,
      policies: driver.audit.policies,
      environment: { variables: Object.keys(options.env).sort(), secrets: Object.keys(options.secrets).sort() },
      credentials: context.credentials?.auditEntries() ?? [],
      notes: [...(driver.audit.notes ?? [])],
    };
    // Redact the JSON-escaped form too: a secret with quotes, backslashes or control characters is escaped in the JSON text.
    const serialised = redactText(JSON.stringify(record), [...secretValues, ...secretValues.map((value) => JSON.stringify(value).slice(1, -1))]);
    return JSON.parse(serialised) as AuditRecord;
  }

  async function kill(): Promise<void> {
    if (!killing) {
      closedAt = new Date().toISOString();
      killing = (async () => {
        await Promise.allSettled([...liveProcesses].map((process) => process.kill()));
        await adapter("kill the sandbox", () => driver.destroy());
      })();
    }
    return killing;
  }

  const sandbox: Sandbox = {
    id: driver.id,
    backend,
    capabilities,
    workspace: driver.workspace,
    commands,
    runCode,
    createCodeContext,
    files,
    audit,
    get closed() {
      return closedAt !== null;
    },
    kill,
    [Symbol.asyncDispose]: kill,
  };
  return sandbox;
}

