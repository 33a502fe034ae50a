import { InvalidArgumentError, TimeoutError } from "../errors/index.js";
import { runCommandOptionsSchema } from "../v1/options.js";
import type { SpawnedProcess } from "../v1/provider.js";
import type { CommandHandle, CommandResult, RunCommandOptions, SandboxCommands } from "../v1/sandbox.js";
import { toBytes } from "../limits/data-input.js";
import { killWithinGrace, type KillOutcome } from "../limits/deadline.js";
import { throwIfAborted } from "../security/guard.js";
import { DEFAULT_OUTPUT_LIMIT_BYTES, OutputCollector, TextChannel } from "../limits/output-collector.js";
import { resolveWorkingDirectory } from "../security/paths.js";
import { redactError } from "../security/redaction.js";
import { RunDeadline, unverifiedStop, verifiedStop, type StopReport } from "../limits/run-deadline.js";
import { isSandboxNotFound, type SandboxState } from "./sandbox-state.js";
import { requireString, validate } from "../security/validate.js";

/** A started command: its process, its result, and its output as it arrives (fed for background commands only). */
interface LaunchedCommand {
  readonly process: SpawnedProcess;
  readonly finished: Promise<CommandResult>;
  readonly stdoutChannel: TextChannel;
  readonly stderrChannel: TextChannel;
}

/**
 * The command with its standard error joined to its standard output by the sandbox's own shell (ADR 0045): `exec 2>&1`
 * runs first, so every later write to either descriptor goes down one pipe in the order the process made it. On a line
 * of its own, so the command's first line (a comment, a here-document) is untouched.
 */
export function combinedOutputCommand(command: string): string {
  return `exec 2>&1\n${command}`;
}

/** What a stopped command's error says about the kill: verified only when the kill was and the exit was reported. */
function commandStopReport(kill: KillOutcome | undefined, exitSettled: boolean, killGraceMs: number): StopReport {
  if (kill?.verified && exitSettled) return verifiedStop("The command and every process it started were killed (verified by the backend).");
  const reasons: string[] = [];
  if (!kill) reasons.push("the backend had not started it, so there was nothing sbx could kill yet");
  else if (!kill.verified) reasons.push(kill.detail);
  if (!exitSettled && kill) reasons.push(`the backend did not report the exit within ${killGraceMs} ms`);
  return unverifiedStop("the command was killed", reasons);
}

/** `sandbox.commands`: shell commands with output caps, stdin, timeouts and aborts that kill, and verified kills. */
export function createSandboxCommands(state: SandboxState): SandboxCommands {
  const { driver, backend, secretValues, killGraceMs } = state;

  /** Starts a process with output collection, timeout and abort handling. */
  async function launch(command: string, rawOptions: RunCommandOptions | undefined, background: boolean): Promise<LaunchedCommand> {
    state.ensureOpen(background ? "start a command" : "run a command");
    requireString(command, "command");
    const runOptions = validate(runCommandOptionsSchema, rawOptions ?? {}, "options");
    if (runOptions.stdin !== undefined) state.requireCapability("STDIN");
    if (runOptions.stdin === true && !background) {
      throw new InvalidArgumentError({
        field: "options.stdin",
        backend,
        message: "Invalid options.stdin: `true` (keep stdin open) only applies to commands.start(); pass the input as text or bytes to run().",
      });
    }
    if (runOptions.onOutput && !runOptions.combinedOutput) {
      throw new InvalidArgumentError({
        field: "options.onOutput",
        backend,
        message: "Invalid options.onOutput: it streams the merged output of { combinedOutput: true }; without it, use onStdout and onStderr.",
      });
    }
    throwIfAborted(runOptions.signal, backend);
    const releaseStartingSlot = state.reserveProcess();
    const deadline = new RunDeadline({
      backend,
      kind: "command",
      timeoutMs: runOptions.timeoutMs ?? state.context.options.commands?.defaultTimeoutMs,
      signal: runOptions.signal,
      killGraceMs,
      secretValues,
    });
    const { guard } = deadline;
    const limit = runOptions.outputLimitBytes ?? DEFAULT_OUTPUT_LIMIT_BYTES;
    const stdout = new OutputCollector(limit);
    const stderr = new OutputCollector(limit);
    if (runOptions.onStdout) stdout.onText(guard.wrap("onStdout", runOptions.onStdout));
    if (runOptions.onStderr) stderr.onText(guard.wrap("onStderr", runOptions.onStderr));
    if (runOptions.onOutput) {
      // Both pipes feed it: the merged one, and the stderr pipe, which carries only what the shell wrote before the merge.
      const onOutput = guard.wrap("onOutput", runOptions.onOutput);
      stdout.onText(onOutput);
      stderr.onText(onOutput);
    }
    const stdoutChannel = new TextChannel(limit);
    const stderrChannel = new TextChannel(limit);
    if (background) {
      stdout.onText((text) => stdoutChannel.push(text));
      stderr.onText((text) => stderrChannel.push(text));
    }
    const started = Date.now();
    let killOutcome: Promise<KillOutcome> | undefined;
    const closeChannels = () => {
      stdoutChannel.end();
      stderrChannel.end();
    };
    const partialOutput = () => ({ stdout: stdout.text(), stderr: stderr.text() });

    const spawning = state.call(
      "spawn",
      () =>
        driver.spawn({
          command: runOptions.combinedOutput ? combinedOutputCommand(command) : command,
          cwd: state.redacting(() => resolveWorkingDirectory(runOptions.cwd, driver.workspace, backend)),
          env: { ...state.spawnEnvironment, ...(runOptions.env ?? {}) },
          stdin: runOptions.stdin !== undefined,
          onStdout: guard.wrap("sbx", (chunk: Uint8Array) => stdout.push(chunk)),
          onStderr: guard.wrap("sbx", (chunk: Uint8Array) => stderr.push(chunk)),
        }),
      { method: "spawn", detail: command, signal: deadline.signal },
    );
    let spawned;
    try {
      spawned = await deadline.settle(spawning);
    } catch (error) {
      releaseStartingSlot();
      deadline.dispose();
      closeChannels();
      throw error;
    }
    if (spawned.settled) state.liveProcesses.add(spawned.value);
    releaseStartingSlot();
    if (!spawned.settled) {
      // The backend never answered the spawn: kill whatever it starts later, and report that nothing was verified.
      void spawning.then((late) => late.kill()).catch(() => {});
      deadline.dispose();
      closeChannels();
      throw redactError(deadline.stoppedError(commandStopReport(undefined, false, killGraceMs), partialOutput()), secretValues);
    }
    const process = spawned.value;
    deadline.onStop(() => {
      killOutcome = killWithinGrace(() => process.kill(), killGraceMs);
    });

    const finished: Promise<CommandResult> = (async () => {
      try {
        if (runOptions.stdin !== undefined && runOptions.stdin !== true) {
          const input = toBytes(runOptions.stdin);
          // Written under the timeout and abort: a command that never reads its stdin must not hang the caller.
          const writing = state.call(
            "write stdin",
            async () => {
              if (input.byteLength > 0) await process.writeStdin(input);
              await process.closeStdin();
            },
            { signal: deadline.signal },
          );
          writing.catch(() => {});
          await Promise.race([writing, deadline.stopped]).catch((error) => {
            if (deadline.reason) return;
            void process.kill().catch(() => {});
            throw error;
          });
        }
        const exit = await state
          .call("wait for a command", () => deadline.settle(process.exit), { signal: deadline.signal })
          .catch((error) => {
            // After a stop, a rejected exit is part of the report, not the outcome (unless the sandbox is gone).
            if (deadline.reason && !state.lost) return { settled: false } as const;
            throw error;
          });
        stdout.finish();
        stderr.finish();
        if (deadline.reason) throw deadline.stoppedError(commandStopReport(await killOutcome, exit.settled, killGraceMs), partialOutput());
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
          ...(runOptions.combinedOutput ? { output: `${stderr.text()}${stdout.text()}` } : {}),
        };
      } catch (error) {
        throw redactError(error, secretValues);
      } finally {
        deadline.dispose();
        state.liveProcesses.delete(process);
        closeChannels();
      }
    })();
    return { process, finished, stdoutChannel, stderrChannel };
  }

  /** The handle of a background command. */
  function handleFor({ process, finished, stdoutChannel, stderrChannel }: LaunchedCommand, stdinOpenAtStart: boolean): CommandHandle {
    let stdinOpen = stdinOpenAtStart;
    return {
      pid: process.pid,
      wait: () => finished,
      kill: () =>
        state.call("kill a command", async () => {
          const outcome = await killWithinGrace(() => process.kill(), killGraceMs);
          // A sandbox that is gone is reported as such (the sandbox-lost rule), not as an unverified kill.
          if (!outcome.verified && isSandboxNotFound(outcome.error)) throw outcome.error;
          if (!outcome.verified)
            throw new TimeoutError({
              backend,
              timeoutMs: killGraceMs,
              killed: false,
              message: unverifiedStop("the command was killed", [outcome.detail]).detail,
            });
        }),
      async writeStdin(data) {
        state.ensureOpen("write to stdin");
        if (!stdinOpen)
          throw new InvalidArgumentError({
            field: "options.stdin",
            backend,
            message: "stdin is not open: start the command with { stdin: true } to write to it, and do not write after closeStdin().",
          });
        await state.call("write stdin", () => process.writeStdin(toBytes(data)));
      },
      async closeStdin() {
        if (!stdinOpen) return;
        stdinOpen = false;
        await state.call("close stdin", () => process.closeStdin());
      },
      stdout: stdoutChannel,
      stderr: stderrChannel,
    };
  }

  return {
    async run(command, runOptions) {
      const { finished } = await launch(command, runOptions, false);
      return finished;
    },
    async start(command, runOptions) {
      state.ensureOpen("start a command");
      state.requireCapability("BACKGROUND_COMMANDS");
      const launched = await launch(command, runOptions, true);
      launched.finished.catch(() => {});
      return handleFor(launched, runOptions?.stdin === true);
    },
  };
}
