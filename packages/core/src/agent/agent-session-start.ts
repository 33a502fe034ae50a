import { ProviderError, RuntimeMissingError, SbxError } from "../errors/index.js";
import { defaultEnvironment } from "../sandbox/default-environment.js";
import { withinTime } from "../limits/deadline.js";
import type { SandboxDriverV1, SpawnRequest } from "../v1/provider.js";
import type { AgentClientSettings } from "./agent-client-options.js";
import { AgentProtocolViolation } from "./agent-frames.js";
import { AgentSession } from "./agent-session.js";
import { agentCommandLine, SBX_AGENT_PROTOCOL } from "./agent-source.js";

/**
 * Starts the agent with one long-lived spawn (the backend's `enforcement.spawnAgent` when given, else the driver's
 * `spawn`) and waits for its `hello`, at most `startTimeoutMs`. A start that fails kills what was spawned and throws
 * typed: `RuntimeMissingError` when the sandbox has no python3 (exit 127) or one older than 3.8 (exit 3), a protocol
 * the host does not speak or a missing hello as a retryable `ProviderError`.
 */
export async function startAgentSession(
  driver: Pick<SandboxDriverV1, "spawn" | "workspace">,
  settings: AgentClientSettings,
  onEnd: (session: AgentSession, reason: string) => void,
): Promise<AgentSession> {
  // Output can arrive before the spawn call returns: it waits here until the session exists.
  let session: AgentSession | undefined;
  const early: Uint8Array[] = [];
  const earlyStderr: Uint8Array[] = [];
  const request: SpawnRequest = {
    command: agentCommandLine(),
    cwd: driver.workspace,
    env: { ...defaultEnvironment(driver.workspace), ...settings.baseEnvironment, PYTHONUNBUFFERED: "1" },
    stdin: true,
    onStdout: (chunk) => (session ? session.receive(chunk) : early.push(chunk.slice())),
    onStderr: (chunk) => (session ? session.receiveStderr(chunk) : earlyStderr.push(chunk.slice())),
  };
  const process = await (settings.enforcement ? settings.enforcement.spawnAgent(request) : driver.spawn(request));
  const started = new AgentSession(process, settings.backend, onEnd);
  session = started;
  const hello = new Promise<Record<string, unknown>>((resolve, reject) => {
    started.expectHello({
      onFrame: (frame) => {
        started.settle(0);
        if (frame.header.type === "hello") resolve(frame.header);
        else reject(new AgentProtocolViolation(`expected hello, got ${frame.header.type}`));
      },
      fail: reject,
    });
  });
  for (const chunk of earlyStderr) started.receiveStderr(chunk);
  for (const chunk of early) started.receive(chunk);
  process.exit.then(
    ({ exitCode }) => started.end(`the sandbox agent exited (exit code ${exitCode})${stderrSuffix(started, ": ", 500)}`, exitCode),
    (error: unknown) => started.end(`the sandbox agent's process failed: ${messageOf(error)}`),
  );
  try {
    const greeting = await withinTime(hello, settings.startTimeoutMs, () => new Error(`no hello within ${settings.startTimeoutMs} ms`));
    if (greeting.protocol !== SBX_AGENT_PROTOCOL)
      throw new Error(`the agent speaks protocol ${String(greeting.protocol)}, this @sbx/core speaks ${SBX_AGENT_PROTOCOL}`);
    started.hello = greeting;
    return started;
  } catch (error) {
    const exitCode = started.exitCode;
    await started.kill();
    throw startError(started, exitCode, settings.backend, error);
  }
}

/** Why the agent did not start, typed. */
function startError(session: AgentSession, exitCode: number | undefined, backend: string, error: unknown): Error {
  const stderr = session.stderrTail;
  if (exitCode === 127 || /python3 not found/.test(stderr))
    return new RuntimeMissingError({ backend, runtime: "python3", detail: "the sbx sandbox agent runs with the image's python3" });
  if (exitCode === 3 || /python3 >= 3\.8 is required/.test(stderr))
    return new RuntimeMissingError({ backend, runtime: "python3 >= 3.8", detail: stderr.slice(-200) });
  if (SbxError.isInstance(error)) return error;
  return new ProviderError({
    backend,
    retryable: true,
    cause: error,
    message: `The sbx sandbox agent did not start: ${messageOf(error)}${stderrSuffix(session, " (stderr: ", 300, ")")}`,
  });
}

/** The agent's stderr tail (its last `length` characters) between `prefix` and `suffix`, or nothing when it wrote none. */
function stderrSuffix(session: AgentSession, prefix: string, length: number, suffix = ""): string {
  const stderr = session.stderrTail;
  return stderr ? `${prefix}${stderr.slice(-length)}${suffix}` : "";
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
