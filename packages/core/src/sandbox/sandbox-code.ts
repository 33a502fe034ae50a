import { CapabilityNotSupportedError, InvalidArgumentError, SbxError } from "../errors/index.js";
import { backendsSupporting } from "../backends/backend-registry.js";
import { runCodeOptionsSchema } from "../v1/options.js";
import type { CodeRequest, DriverExecution } from "../v1/provider.js";
import type { CodeContext, Execution, RunCodeOptions, Sandbox } from "../v1/sandbox.js";
import { capResults, DEFAULT_MAX_RESULTS, describeCodeExit } from "../limits/execution-limits.js";
import { throwIfAborted } from "../security/guard.js";
import { codeChannelOutput, oneShotOutput } from "./code-output.js";
import { DEFAULT_OUTPUT_LIMIT_BYTES } from "../limits/output-collector.js";
import { runPythonOneShot } from "./python-one-shot.js";
import { redactError, redactText } from "../security/redaction.js";
import { RunDeadline, unverifiedStop, verifiedStop } from "../limits/run-deadline.js";
import type { SandboxState } from "./sandbox-state.js";
import { requireString, validate } from "../security/validate.js";

/** `sandbox.runCode` and `sandbox.createCodeContext`: the backend's code channel, else core's one-shot Python. */
export function createSandboxCode(state: SandboxState): Pick<Sandbox, "runCode" | "createCodeContext"> {
  const { driver, backend, capabilities, secretValues, killGraceMs, context } = state;

  async function runCode(code: string, rawOptions?: RunCodeOptions): Promise<Execution> {
    state.ensureOpen("run code");
    requireString(code === "" ? " " : code, "code");
    const codeOptions = validate(runCodeOptionsSchema, rawOptions ?? {}, "options");
    const language = codeOptions.language ?? "python";
    if (codeOptions.contextId !== undefined) state.requireCapability("STATEFUL_CODE", "code contexts");
    if (codeOptions.contextId !== undefined && !context.reconnected && !state.createdContexts.has(codeOptions.contextId)) {
      throw new InvalidArgumentError({
        field: "options.contextId",
        backend,
        message: `Invalid options.contextId: ${JSON.stringify(redactText(String(codeOptions.contextId), secretValues))} is not a code context of this sandbox. Use the id returned by sandbox.createCodeContext(), or omit contextId for a one-shot run.`,
      });
    }
    state.requireLanguage(language);
    throwIfAborted(codeOptions.signal, backend);
    const deadline = new RunDeadline({
      backend,
      kind: "code",
      timeoutMs: codeOptions.timeoutMs,
      signal: codeOptions.signal,
      killGraceMs,
      secretValues,
    });
    const { guard } = deadline;
    const limit = codeOptions.outputLimitBytes ?? DEFAULT_OUTPUT_LIMIT_BYTES;
    const resultCaps = { maxResults: codeOptions.maxResults ?? DEFAULT_MAX_RESULTS, limitBytes: limit };
    const output = driver.runCode ? codeChannelOutput(limit, guard, codeOptions) : oneShotOutput(limit, guard, codeOptions);
    const { stdout, stderr } = output;
    const started = Date.now();
    const request: CodeRequest = {
      code,
      language,
      contextId: codeOptions.contextId,
      env: driver.runCode ? state.baseEnvironment : state.spawnEnvironment,
      cwd: driver.workspace,
      signal: deadline.signal,
      // A caller streaming output sees all of it, as with commands; only then may the backend not cut at the limit.
      outputLimitBytes: codeOptions.onStdout || codeOptions.onStderr ? undefined : limit,
      resultCaps,
      ...output.text,
    };
    try {
      const running = state.call("run code", () => (driver.runCode ? driver.runCode(request) : runPythonOneShot(driver, request, output.bytes)), {
        method: driver.runCode ? "runCode" : "spawn",
        detail: code,
        signal: deadline.signal,
      });
      running.catch(() => {});
      const outcome = await deadline.settle(running).catch((error: unknown) => {
        // After a stop, a driver that rejects with its own timeout/abort error has stopped the run; any other
        // rejection means the stop could not be confirmed. A lost sandbox is reported as such.
        if (!deadline.reason || state.lost) throw error;
        const stoppedCleanly = SbxError.isInstance(error) && (error.code === "SBX_ABORTED" || error.code === "SBX_TIMEOUT");
        const stoppedRun: DriverExecution = { error: null, results: null };
        return stoppedCleanly ? ({ settled: true, value: stoppedRun } as const) : ({ settled: false, failure: error } as const);
      });
      if (deadline.reason) {
        const failure = "failure" in outcome ? outcome.failure : undefined;
        const report = outcome.settled
          ? verifiedStop("The run was stopped (verified by the backend).")
          : unverifiedStop("the run was stopped", [
              failure ? (failure instanceof Error ? failure.message : String(failure)) : `the backend did not confirm within ${killGraceMs} ms`,
            ]);
        throw deadline.stoppedError(report, { stdout: stdout.text(), stderr: stderr.text() });
      }
      stdout.finish();
      stderr.finish();
      guard.throwIfFailed();
      if (!outcome.settled) throw new Error("unreachable: the run settles unless it was stopped");
      const driverOutcome = outcome.value;
      const results = capabilities.RICH_RESULTS ? capResults(driverOutcome.results ?? [], resultCaps) : { results: null, truncated: false };
      return {
        stdout: stdout.text(),
        stderr: stderr.text(),
        error: driverOutcome.error ?? describeCodeExit(driverOutcome, { memoryMiB: context.options.limits?.memoryMiB }),
        results: results.results,
        durationMs: Date.now() - started,
        // Output the backend itself cut inside the sandbox (the sandbox agent does) counts as truncated too.
        truncated: {
          stdout: stdout.truncated || (driverOutcome.droppedBytes?.stdout ?? 0) > 0,
          stderr: stderr.truncated || (driverOutcome.droppedBytes?.stderr ?? 0) > 0,
          results: results.truncated || (driverOutcome.droppedResults ?? 0) > 0,
        },
        totalBytes: {
          stdout: stdout.totalBytes + (driverOutcome.droppedBytes?.stdout ?? 0),
          stderr: stderr.totalBytes + (driverOutcome.droppedBytes?.stderr ?? 0),
        },
        outOfMemoryKilled: driverOutcome.outOfMemoryKilled ?? null,
      };
    } catch (error) {
      throw redactError(error, secretValues);
    } finally {
      deadline.dispose();
    }
  }

  async function createCodeContext(contextOptions?: { language?: string; signal?: AbortSignal }): Promise<CodeContext> {
    state.ensureOpen("create a code context");
    state.requireCapability("STATEFUL_CODE", "code contexts");
    const language = contextOptions?.language ?? "python";
    requireString(language, "options.language");
    state.requireLanguage(language);
    throwIfAborted(contextOptions?.signal, backend);
    const create = driver.createCodeContext;
    if (!create)
      throw new CapabilityNotSupportedError({
        capability: "STATEFUL_CODE",
        backend,
        supportedBy: backendsSupporting("STATEFUL_CODE", backend),
        detail: "the adapter declares it but does not implement createCodeContext",
      });
    const created = await state.call("create a code context", () => create({ language, cwd: driver.workspace, signal: contextOptions?.signal }), {
      method: "createCodeContext",
      detail: language,
      signal: contextOptions?.signal,
    });
    state.createdContexts.add(created.id);
    return Object.freeze({ id: created.id, language: created.language });
  }

  return { runCode, createCodeContext };
}
