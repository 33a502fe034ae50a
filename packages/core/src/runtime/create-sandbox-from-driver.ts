import { createReadStream } from "node:fs";
import { rm, stat as hostStat } from "node:fs/promises";
import { Readable } from "node:stream";
import { AbortedError, CapabilityNotSupportedError, FileTooLargeError, InvalidArgumentError, SandboxClosedError, SandboxNotFoundError, SbxError, TimeoutError } from "../errors/index.js";
import type { AuditRecord } from "../v1/audit.js";
import { backendsSupporting } from "../v1/backend-registry.js";
import type { CapabilityName } from "../v1/capabilities.js";
import type { CredentialAuditEntry } from "../v1/credentials.js";
import { runCodeOptionsSchema, runCommandOptionsSchema, type ResolvedCreateOptions } from "../v1/options.js";
import type { DriverExecution, SandboxDriverV1, SandboxProviderV1, SpawnedProcess } from "../v1/provider.js";
import type { CodeContext, CommandHandle, CommandResult, Execution, FileReadOptions, RunCodeOptions, RunCommandOptions, Sandbox, SandboxFiles } from "../v1/sandbox.js";
import { CallbackGuard } from "./callback-guard.js";
import { DEFAULT_KILL_GRACE_MS, Deadline, IdleWatchdog, killWithinGrace, settleWithinGrace, withinTime, type KillOutcome, type StopReason } from "./deadline.js";
import { callAdapter, throwIfAborted } from "./guard.js";
import { capResults, DEFAULT_MAX_RESULTS, describeCodeExit } from "./execution-limits.js";
import { boundedDownload, DEFAULT_FILE_TIMEOUT_MS, DEFAULT_READ_LIMIT_BYTES, limitedStream, readWithLimit, requireLimit } from "./file-limits.js";
import { MIN_SECRET_LENGTH, redactError, redactText } from "./redaction.js";
import { TextOutputCollector } from "./text-output-collector.js";
import { DEFAULT_OUTPUT_LIMIT_BYTES, OutputCollector, TextChannel } from "./output-collector.js";
import { resolveWorkingDirectory, resolveWorkspacePath } from "./paths.js";
import { runPythonOneShot } from "./python-one-shot.js";
import { defaultEnvironment } from "./default-environment.js";
import { withDriverDefaults } from "./driver-defaults.js";
import { buildAuditRecord } from "./audit-record.js";
import { requireString, validate } from "./validate.js";
import { rememberDriver } from "./native-handle.js";

/** Everything `createSandboxFromDriver` needs besides the driver. */
export interface SandboxContext {
  /** The provider that made the driver. */
  readonly provider: SandboxProviderV1;
  /** The target it was created from. */
  readonly target: string;
  /** The validated options. */
  readonly options: ResolvedCreateOptions;
  /**
   * How long, after work is told to stop, the backend gets to confirm the kill and report the exit before sbx gives
   * up and reports `killed: false`. Default 10000.
   */
  readonly killGraceMs?: number;
  /**
   * True when the sandbox was attached with `connectSandbox`: code contexts created by an earlier connection may
   * exist, so a `contextId` this object did not create is passed to the backend instead of refused. Default false.
   */
  readonly reconnected?: boolean;
  /** How long `kill()` waits for the backend to destroy the sandbox before rejecting with `TimeoutError`. Default 30000. */
  readonly destroyTimeoutMs?: number;
  /** The sandbox's scoped credentials, for the audit record (see `credential()`). */
  readonly credentials?: { auditEntries(): CredentialAuditEntry[] };
}

/**
 * Wraps an adapter's primitives into the full `Sandbox`: option validation, capability checks, closed-state
 * checks, timeouts that kill, output caps, path confinement, secret redaction and the audit record.
 * Adapters never implement these themselves.
 */
export function createSandboxFromDriver(givenDriver: SandboxDriverV1, context: SandboxContext): Sandbox {
  // The optional file operations a driver leaves out come from core's POSIX defaults on its `spawn` (ADR 0020).
  const driver = withDriverDefaults(givenDriver);
  const { provider, options } = context;
  const backend = provider.backend;
  const capabilities = provider.capabilities;
  for (const [name, value] of Object.entries(options.secrets)) {
    if (value.length < MIN_SECRET_LENGTH) {
      throw new InvalidArgumentError({ field: `options.secrets.${name}`, backend, message: `Invalid options.secrets.${name}: a secret must be at least ${MIN_SECRET_LENGTH} characters. A shorter value ("1", "true", "none") occurs by chance in unrelated text, so it cannot be redacted without destroying that text; pass it in env if it is not secret.` });
    }
  }
  const secretValues = Object.values(options.secrets);
  const killGraceMs = context.killGraceMs ?? DEFAULT_KILL_GRACE_MS;
  const destroyTimeoutMs = context.destroyTimeoutMs ?? 30_000;
  const baseEnvironment = { ...options.env, ...options.secrets };
  /** What every spawn sees: core's defaults (PATH, HOME, LANG), overridden by the sandbox env and its secrets. */
  const spawnEnvironment = { ...defaultEnvironment(driver.workspace), ...baseEnvironment };
  const createdAt = new Date().toISOString();
  let closedAt: string | null = null;
  let killing: Promise<void> | undefined;
  /** Set when a driver reported the sandbox gone (`SandboxNotFoundError`): every later call reports the same. */
  let lostError: SandboxNotFoundError | undefined;
  const liveProcesses = new Set<SpawnedProcess>();
  /** Code context ids this sandbox object created, so an unknown `contextId` is refused by name. */
  const createdContexts = new Set<string>();

  /**
   * The sandbox-lost rule: a driver's `SandboxNotFoundError` during any call marks the sandbox closed and lost, and
   * every call from then on (but `kill()`, which resolves) throws `SandboxNotFoundError`.
   */
  function markLost(error: unknown): void {
    if (lostError || !SbxError.isInstance(error) || error.code !== "SBX_SANDBOX_NOT_FOUND" || killing) return;
    lostError = error as SandboxNotFoundError;
    closedAt ??= new Date().toISOString();
    // Whatever was still running is gone with the sandbox; waiters learn it from their own calls.
  }

  const adapter = async <Result>(operation: string, call: () => Promise<Result>): Promise<Result> => {
    try {
      return await callAdapter(backend, operation, secretValues, call);
    } catch (error) {
      markLost(error);
      throw error;
    }
  };

  function lostSandboxError(operation: string): SandboxNotFoundError {
    return new SandboxNotFoundError({ sandboxId: driver.id, backend, cause: lostError, message: `Cannot ${operation}: sandbox ${driver.id} is gone (it was removed outside sbx, or its lifetime ended). Create a new sandbox.` });
  }

  function ensureOpen(operation: string): void {
    if (lostError) throw lostSandboxError(operation);
    if (closedAt !== null) throw new SandboxClosedError({ sandboxId: driver.id, operation, backend });
  }

  /** The error for work stopped by a timeout when the kill could not be verified (or was), with what happened. */
  function killReport(kill: KillOutcome | undefined, exitSettled: boolean, what: string): { killed: boolean; detail: string } {
    if (kill?.verified && exitSettled) return { killed: true, detail: `${what} and every process it started were killed (verified by the backend).` };
    const reasons: string[] = [];
    if (!kill) reasons.push("the backend had not started it, so there was nothing sbx could kill yet");
    else if (!kill.verified) reasons.push(kill.detail);
    if (!exitSettled && kill) reasons.push(`the backend did not report the exit within ${killGraceMs} ms`);
    return { killed: false, detail: `sbx could not verify that ${what.toLowerCase()} was killed: ${reasons.join("; ")}. Processes may survive in the sandbox; kill the sandbox to be sure.` };
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
    // The deadline starts before the first backend call, so a backend that stalls while starting still times out.
    const deadline = new Deadline({ timeoutMs: runOptions.timeoutMs, signal: runOptions.signal });
    const guard = new CallbackGuard(backend, () => deadline.stop("callback"));
    const limit = runOptions.outputLimitBytes ?? DEFAULT_OUTPUT_LIMIT_BYTES;
    const stdout = new OutputCollector(limit);
    const stderr = new OutputCollector(limit);
    if (runOptions.onStdout) stdout.onText(guard.wrap("onStdout", runOptions.onStdout));
    if (runOptions.onStderr) stderr.onText(guard.wrap("onStderr", runOptions.onStderr));
    const stdoutChannel = new TextChannel(limit);
    const stderrChannel = new TextChannel(limit);
    if (background) {
      stdout.onText((text) => stdoutChannel.push(text));
      stderr.onText((text) => stderrChannel.push(text));
    }
    const started = Date.now();
    const environment = { ...spawnEnvironment, ...(runOptions.env ?? {}) };
    let killOutcome: Promise<KillOutcome> | undefined;
    const closeChannels = () => {
      stdoutChannel.end();
      stderrChannel.end();
    };

    const stoppedError = (reason: StopReason, report: { killed: boolean; detail: string }): SbxError => {
      if (reason === "callback") return guard.failure!;
      if (reason === "abort") return new AbortedError({ backend, cause: runOptions.signal?.reason, message: `The command was aborted by the caller. ${report.detail}` });
      return new TimeoutError({
        backend,
        timeoutMs: runOptions.timeoutMs!,
        killed: report.killed,
        partialStdout: redactText(stdout.text(), secretValues),
        partialStderr: redactText(stderr.text(), secretValues),
        message: `The command ran past its ${runOptions.timeoutMs} ms timeout. ${report.detail}`,
      });
    };

    const spawning = adapter("spawn", () =>
      driver.spawn({
        command,
        cwd: redacting(() => resolveWorkingDirectory(runOptions.cwd, driver.workspace, backend)),
        env: environment,
        stdin: runOptions.stdin !== undefined,
        onStdout: guard.wrap("sbx", (chunk: Uint8Array) => stdout.push(chunk)),
        onStderr: guard.wrap("sbx", (chunk: Uint8Array) => stderr.push(chunk)),
      }),
    );
    let spawned;
    try {
      spawned = await settleWithinGrace(spawning, deadline.stopped, killGraceMs);
    } catch (error) {
      deadline.dispose();
      closeChannels();
      throw error;
    }
    if (!spawned.settled) {
      // The backend never answered the spawn: kill whatever it starts later, and report that nothing was verified.
      void spawning.then((late) => late.kill()).catch(() => {});
      deadline.dispose();
      closeChannels();
      throw redactError(stoppedError(deadline.reason!, killReport(undefined, false, "The command")), secretValues);
    }
    const process = spawned.value;
    liveProcesses.add(process);
    deadline.onStop(() => {
      killOutcome = killWithinGrace(() => process.kill(), killGraceMs);
    });

    const finished: Promise<CommandResult> = (async () => {
      try {
        if (runOptions.stdin !== undefined && runOptions.stdin !== true) {
          const input = toBytes(runOptions.stdin);
          // Written under the timeout and abort: a command that never reads its stdin must not hang the caller.
          const writing = adapter("write stdin", async () => {
            if (input.byteLength > 0) await process.writeStdin(input);
            await process.closeStdin();
          });
          writing.catch(() => {});
          await Promise.race([writing, deadline.stopped]).catch((error) => {
            if (deadline.reason) return;
            void process.kill().catch(() => {});
            throw error;
          });
        }
        const exit = await adapter("wait for a command", () => settleWithinGrace(process.exit, deadline.stopped, killGraceMs)).catch((error) => {
          // After a stop, a rejected exit is part of the report, not the outcome (unless the sandbox is gone).
          if (deadline.reason && !lostError) return { settled: false } as const;
          throw error;
        });
        stdout.finish();
        stderr.finish();
        if (deadline.reason) {
          const kill = await killOutcome;
          throw stoppedError(deadline.reason, killReport(kill, exit.settled, "The command"));
        }
        guard.throwIfFailed();
        if (!exit.settled) throw new Error("unreachable: the exit settles unless the command was stopped");
        return {
          exitCode: exit.value.exitCode,
          stdout: stdout.text(),
          stderr: stderr.text(),
          stdoutBytes: stdout.bytes(),
          stderrBytes: stderr.bytes(),
          durationMs: Date.now() - started,
          truncated: { stdout: stdout.truncated, stderr: stderr.truncated },
          totalBytes: { stdout: stdout.totalBytes, stderr: stderr.totalBytes },
          outOfMemoryKilled: exit.value.outOfMemoryKilled ?? null,
        };
      } catch (error) {
        throw redactError(error, secretValues);
      } finally {
        deadline.dispose();
        liveProcesses.delete(process);
        closeChannels();
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
        kill: () => adapter("kill a command", async () => {
          const outcome = await killWithinGrace(() => process.kill(), killGraceMs);
          // A sandbox that is gone is reported as such (the sandbox-lost rule), not as an unverified kill.
          if (!outcome.verified && SbxError.isInstance(outcome.error) && outcome.error.code === "SBX_SANDBOX_NOT_FOUND") throw outcome.error;
          if (!outcome.verified) throw new TimeoutError({ backend, timeoutMs: killGraceMs, killed: false, message: `sbx could not verify that the command was killed: ${outcome.detail}. Processes may survive in the sandbox; kill the sandbox to be sure.` });
        }),
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
    if (codeOptions.contextId !== undefined && !context.reconnected && !createdContexts.has(codeOptions.contextId)) {
      throw new InvalidArgumentError({ field: "options.contextId", backend, message: `Invalid options.contextId: ${JSON.stringify(redactText(String(codeOptions.contextId), secretValues))} is not a code context of this sandbox. Use the id returned by sandbox.createCodeContext(), or omit contextId for a one-shot run.` });
    }
    requireLanguage(language);
    throwIfAborted(codeOptions.signal, backend);
    // The deadline starts before the first backend call, so a backend that stalls while starting still times out.
    const deadline = new Deadline({ timeoutMs: codeOptions.timeoutMs, signal: codeOptions.signal });
    const controller = new AbortController();
    deadline.onStop(() => controller.abort());
    const guard = new CallbackGuard(backend, () => deadline.stop("callback"));
    const limit = codeOptions.outputLimitBytes ?? DEFAULT_OUTPUT_LIMIT_BYTES;
    const userStdout = codeOptions.onStdout ? guard.wrap("onStdout", codeOptions.onStdout) : undefined;
    const userStderr = codeOptions.onStderr ? guard.wrap("onStderr", codeOptions.onStderr) : undefined;
    // A code channel delivers text; the one-shot path delivers bytes, kept and counted exactly as for commands (so
    // bytes past the cap are never even decoded unless a listener wants them).
    const oneShot = !driver.runCode;
    const stdoutBytes = new OutputCollector(limit);
    const stderrBytes = new OutputCollector(limit);
    if (userStdout) stdoutBytes.onText(userStdout);
    if (userStderr) stderrBytes.onText(userStderr);
    const stdoutText = new TextOutputCollector(limit);
    const stderrText = new TextOutputCollector(limit);
    const stdout = oneShot ? stdoutBytes : stdoutText;
    const stderr = oneShot ? stderrBytes : stderrText;
    const started = Date.now();
    const request = {
      code,
      language,
      contextId: codeOptions.contextId,
      env: oneShot ? spawnEnvironment : baseEnvironment,
      cwd: driver.workspace,
      signal: controller.signal,
      // A caller streaming output sees all of it, as with commands; only then may the backend not cut at the limit.
      outputLimitBytes: codeOptions.onStdout || codeOptions.onStderr ? undefined : limit,
      onStdout: guard.wrap("sbx", (text: string) => {
        stdoutText.push(text);
        userStdout?.(text);
      }),
      onStderr: guard.wrap("sbx", (text: string) => {
        stderrText.push(text);
        userStderr?.(text);
      }),
    };
    const byteOutput = {
      onStdout: guard.wrap("sbx", (chunk: Uint8Array) => stdoutBytes.push(chunk)),
      onStderr: guard.wrap("sbx", (chunk: Uint8Array) => stderrBytes.push(chunk)),
    };
    try {
      const running = adapter("run code", () => driver.runCode ? driver.runCode(request) : runPythonOneShot(driver, request, byteOutput));
      running.catch(() => {});
      const outcome = await settleWithinGrace(running, deadline.stopped, killGraceMs).catch((error: unknown) => {
        // After a stop, a driver that rejects with its own timeout/abort error has stopped the run; any other
        // rejection means the stop could not be confirmed. A lost sandbox is reported as such.
        if (!deadline.reason || lostError) throw error;
        const stoppedCleanly = SbxError.isInstance(error) && (error.code === "SBX_ABORTED" || error.code === "SBX_TIMEOUT");
        const stoppedRun: DriverExecution = { error: null, results: null };
        return stoppedCleanly ? ({ settled: true, value: stoppedRun } as const) : ({ settled: false, failure: error } as const);
      });
      if (deadline.reason) {
        const failure = "failure" in outcome ? outcome.failure : undefined;
        const report = outcome.settled
          ? { killed: true, detail: "The run was stopped (verified by the backend)." }
          : { killed: false, detail: `sbx could not verify that the run was stopped: ${failure ? (failure instanceof Error ? failure.message : String(failure)) : `the backend did not confirm within ${killGraceMs} ms`}. Processes may survive in the sandbox; kill the sandbox to be sure.` };
        if (deadline.reason === "callback") throw guard.failure!;
        if (deadline.reason === "abort") throw new AbortedError({ backend, cause: codeOptions.signal?.reason, message: `The code run was aborted by the caller. ${report.detail}` });
        throw new TimeoutError({ backend, timeoutMs: codeOptions.timeoutMs!, killed: report.killed, partialStdout: redactText(stdout.text(), secretValues), partialStderr: redactText(stderr.text(), secretValues), message: `The code ran past its ${codeOptions.timeoutMs} ms timeout. ${report.detail}` });
      }
      stdoutBytes.finish();
      stderrBytes.finish();
      guard.throwIfFailed();
      if (!outcome.settled) throw new Error("unreachable: the run settles unless it was stopped");
      const driverOutcome = outcome.value;
      const results = capabilities.RICH_RESULTS ? capResults(driverOutcome.results ?? [], { maxResults: codeOptions.maxResults ?? DEFAULT_MAX_RESULTS, limitBytes: limit }) : { results: null, truncated: false };
      const outOfMemoryKilled = driverOutcome.outOfMemoryKilled ?? null;
      return {
        stdout: stdout.text(),
        stderr: stderr.text(),
        error: driverOutcome.error ?? describeCodeExit(driverOutcome, limits()),
        results: results.results,
        durationMs: Date.now() - started,
        // Output the backend itself cut inside the sandbox (the sandbox agent does) counts as truncated too.
        truncated: { stdout: stdout.truncated || (driverOutcome.droppedBytes?.stdout ?? 0) > 0, stderr: stderr.truncated || (driverOutcome.droppedBytes?.stderr ?? 0) > 0, results: results.truncated },
        totalBytes: { stdout: stdout.totalBytes + (driverOutcome.droppedBytes?.stdout ?? 0), stderr: stderr.totalBytes + (driverOutcome.droppedBytes?.stderr ?? 0) },
        outOfMemoryKilled,
      };
    } catch (error) {
      throw redactError(error, secretValues);
    } finally {
      deadline.dispose();
    }
  }

  function limits(): { memoryMiB?: number } {
    return { memoryMiB: options.limits?.memoryMiB };
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
    createdContexts.add(created.id);
    return Object.freeze({ id: created.id, language: created.language });
  }

  /** Resolves a caller's path; a refusal never carries a secret the path held (errors are redacted like every other). */
  const workspacePath = (path: unknown) => {
    if (typeof path !== "string") throw new InvalidArgumentError({ field: "path", backend, message: `Invalid path: expected a string relative to the workspace (or absolute inside it), got ${path === null ? "null" : typeof path}.` });
    return redacting(() => resolveWorkspacePath(path, driver.workspace, backend));
  };

  function redacting<Result>(work: () => Result): Result {
    try {
      return work();
    } catch (error) {
      throw redactError(error, secretValues);
    }
  }

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

  /**
   * Runs one file operation under a deadline (the caller's `timeoutMs`, else `defaultTimeoutMs`) and the caller's
   * signal. The driver gets a signal that fires on either; the call settles as soon as the deadline passes, with
   * `TimeoutError` (`killed: false`: the backend may still finish the operation) or `AbortedError`, even if the
   * backend never answers.
   */
  async function fileCall<Result>(operation: string, fileOptions: { signal?: AbortSignal; timeoutMs?: number } | undefined, defaultTimeoutMs: number | undefined, work: (signal: AbortSignal, watchdog: IdleWatchdog | undefined) => Promise<Result>): Promise<Result> {
    const callerTimeoutMs = requireLimit(fileOptions?.timeoutMs, "options.timeoutMs", backend);
    const timeoutMs = callerTimeoutMs ?? defaultTimeoutMs;
    throwIfAborted(fileOptions?.signal, backend);
    const deadline = new Deadline({ timeoutMs, signal: fileOptions?.signal });
    // A transfer with no total deadline is still bounded: it fails once it makes no progress for the file timeout.
    const watchdog = timeoutMs === undefined ? new IdleWatchdog(DEFAULT_FILE_TIMEOUT_MS) : undefined;
    const controller = new AbortController();
    deadline.onStop(() => controller.abort());
    const stoppedMarker = Symbol("stopped");
    const stalledMarker = Symbol("stalled");
    try {
      const working = adapter(operation, () => work(controller.signal, watchdog));
      working.catch(() => {});
      const outcome = await Promise.race([working, deadline.stopped.then(() => stoppedMarker), ...(watchdog ? [watchdog.stalled.then(() => stalledMarker)] : [])]);
      if (outcome === stalledMarker) {
        controller.abort();
        throw new TimeoutError({ backend, timeoutMs: DEFAULT_FILE_TIMEOUT_MS, killed: false, message: `The ${backend} backend made no progress (${operation}) for ${DEFAULT_FILE_TIMEOUT_MS} ms; sbx stopped waiting (the backend may still complete it). Pass { timeoutMs } to bound the whole transfer instead.` });
      }
      if (outcome !== stoppedMarker) return outcome as Result;
      if (deadline.reason === "abort") throw new AbortedError({ backend, cause: fileOptions?.signal?.reason, message: `The caller aborted: ${operation}.` });
      throw new TimeoutError({ backend, timeoutMs: timeoutMs!, killed: false, message: `The ${backend} backend did not finish (${operation}) within ${timeoutMs} ms; sbx stopped waiting (the backend may still complete it). Pass a larger { timeoutMs } for slow operations.` });
    } catch (error) {
      throw redactError(error, secretValues);
    } finally {
      deadline.dispose();
      watchdog?.dispose();
    }
  }

  /** Builds the refusal of a too-large file, with the file's size when the backend can tell it (bounded). */
  function tooLargeFor(target: string, limitBytes: number, option: string) {
    return async (seenBytes: number): Promise<FileTooLargeError> => {
      const reported = await withinTime(driver.stat(target, {}), 5_000, () => new Error("stat did not answer")).then((entry) => entry.size, () => undefined);
      const known = typeof reported === "number" && reported >= seenBytes;
      return new FileTooLargeError({ backend, path: target, sizeBytes: known ? reported : seenBytes, atLeast: !known, limitBytes, option });
    };
  }

  const files: SandboxFiles = {
    async write(path, data, fileOptions) {
      ensureOpen("write a file");
      const target = workspacePath(path);
      throwIfAborted(fileOptions?.signal, backend);
      // Core always passes the length when it knows it (strings and byte arrays), so archive-based adapters never spool.
      const bytes = typeof data === "string" || data instanceof Uint8Array ? toBytes(data) : undefined;
      const stream = toStream(bytes ?? data);
      const sizeBytes = bytes?.byteLength;
      await fileCall("write a file", fileOptions, undefined, (signal, watchdog) => driver.writeFile(target, watchdog ? watchdog.observe(stream) : stream, sizeBytes === undefined ? { signal } : { signal, sizeBytes }));
    },
    read: (async (path: string, fileOptions?: FileReadOptions & { format?: "text" | "bytes" | "stream" }) => {
      ensureOpen("read a file");
      const target = workspacePath(path);
      const format = fileOptions?.format ?? "text";
      if (!["text", "bytes", "stream"].includes(format)) throw new InvalidArgumentError({ field: "options.format", backend, message: `Invalid options.format: expected "text", "bytes" or "stream", got ${JSON.stringify(format)}.` });
      const maxBytes = requireLimit(fileOptions?.maxBytes, "options.maxBytes", backend);
      if (format === "stream") {
        // The deadline covers opening the stream; the caller paces the transfer. The caller's signal still reaches the driver.
        const stream = await fileCall("read a file", fileOptions, DEFAULT_FILE_TIMEOUT_MS, () => driver.readFile(target, { signal: fileOptions?.signal }));
        return limitedStream(stream, maxBytes, tooLargeFor(target, maxBytes ?? 0, "maxBytes"));
      }
      const limitBytes = maxBytes ?? DEFAULT_READ_LIMIT_BYTES;
      const bytes = await fileCall("read a file", fileOptions, DEFAULT_FILE_TIMEOUT_MS, async (signal) => {
        const stream = await driver.readFile(target, { signal });
        return readWithLimit(stream, limitBytes, tooLargeFor(target, limitBytes, "maxBytes"));
      });
      return format === "bytes" ? bytes : new TextDecoder().decode(bytes);
    }) as SandboxFiles["read"],
    async list(path, fileOptions) {
      ensureOpen("list a directory");
      const target = workspacePath(path);
      return fileCall("list a directory", fileOptions, DEFAULT_FILE_TIMEOUT_MS, (signal) => driver.list(target, { signal }));
    },
    async stat(path, fileOptions) {
      ensureOpen("stat a file");
      const target = workspacePath(path);
      return fileCall("stat a file", fileOptions, DEFAULT_FILE_TIMEOUT_MS, (signal) => driver.stat(target, { signal }));
    },
    async exists(path, fileOptions) {
      ensureOpen("check a file");
      const target = workspacePath(path);
      try {
        await fileCall("stat a file", fileOptions, DEFAULT_FILE_TIMEOUT_MS, (signal) => driver.stat(target, { signal }));
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
      await fileCall("remove a file", fileOptions, DEFAULT_FILE_TIMEOUT_MS, (signal) => driver.remove(target, { recursive: fileOptions?.recursive ?? false, signal }));
    },
    async mkdir(path, fileOptions) {
      ensureOpen("make a directory");
      const target = workspacePath(path);
      await fileCall("make a directory", fileOptions, DEFAULT_FILE_TIMEOUT_MS, (signal) => driver.mkdir(target, { signal }));
    },
    async rename(from, to, fileOptions) {
      ensureOpen("rename a file");
      const source = workspacePath(from);
      const destination = workspacePath(to);
      await fileCall("rename a file", fileOptions, DEFAULT_FILE_TIMEOUT_MS, (signal) => driver.rename(source, destination, { signal }));
    },
    async upload(hostPath, sandboxPath, fileOptions) {
      ensureOpen("upload a file");
      requireString(hostPath, "hostPath");
      const target = workspacePath(sandboxPath);
      const info = await hostStat(hostPath).catch(() => undefined);
      if (!info?.isFile()) throw redactError(new InvalidArgumentError({ field: "hostPath", backend, message: `Invalid hostPath: ${hostPath} is not a readable regular file on the host.` }), secretValues);
      const stream = Readable.toWeb(createReadStream(hostPath, { highWaterMark: 1024 * 1024 })) as ReadableStream<Uint8Array>;
      await fileCall("upload a file", fileOptions, undefined, (signal, watchdog) => driver.writeFile(target, watchdog ? watchdog.observe(stream) : stream, { signal, sizeBytes: info.size }));
    },
    async download(sandboxPath, hostPath, fileOptions) {
      ensureOpen("download a file");
      requireString(hostPath, "hostPath");
      const source = workspacePath(sandboxPath);
      const maxBytes = requireLimit(fileOptions?.maxBytes, "options.maxBytes", backend);
      await fileCall("download a file", fileOptions, undefined, async (signal, watchdog) => {
        const opened = await driver.readFile(source, { signal });
        const stream = watchdog ? watchdog.observe(opened) : opened;
        try {
          await boundedDownload(stream, hostPath, { limitBytes: maxBytes, signal, tooLarge: tooLargeFor(source, maxBytes ?? 0, "maxBytes") });
        } catch (error) {
          if (SbxError.isInstance(error)) throw error;
          if (signal.aborted) throw new AbortedError({ backend });
          throw error;
        }
      }).catch(async (error: unknown) => {
        // The partial host file is removed on every failure, including a deadline that passed mid-transfer.
        await rm(hostPath, { force: true }).catch(() => {});
        throw error;
      });
    },
  };

  const audit = (): AuditRecord => buildAuditRecord({ driver, context, createdAt, closedAt, secretValues });

  /**
   * Destroys the sandbox. Bounded: live processes get the kill grace, the backend's destroy gets `destroyTimeoutMs`,
   * after which `kill()` rejects with `TimeoutError` (the sandbox is marked closed either way). A lost sandbox is
   * already gone: `kill()` resolves.
   */
  async function kill(): Promise<void> {
    if (!killing) {
      closedAt ??= new Date().toISOString();
      killing = (async () => {
        const processKills = Promise.allSettled([...liveProcesses].map((process) => killWithinGrace(() => process.kill(), killGraceMs)));
        const destroying = adapter("kill the sandbox", () => driver.destroy()).catch((error: unknown) => {
          if (lostError || (SbxError.isInstance(error) && error.code === "SBX_SANDBOX_NOT_FOUND")) return;
          throw error;
        });
        await withinTime(destroying, destroyTimeoutMs, () => new TimeoutError({ backend, timeoutMs: destroyTimeoutMs, killed: false, message: `The ${backend} backend did not confirm within ${destroyTimeoutMs} ms that sandbox ${driver.id} was destroyed; it may keep running until its lifetime ends.` }));
        await processKills;
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
  rememberDriver(sandbox, driver);
  return sandbox;
}

