import type { SandboxDriverV1 } from "../v1/provider.js";
import type { Sandbox } from "../v1/sandbox.js";
import { buildAuditRecord } from "./audit-record.js";
import { rememberDriver } from "./native-handle.js";
import { createSandboxCode } from "./sandbox-code.js";
import { createSandboxCommands } from "./sandbox-commands.js";
import { createSandboxFiles } from "./sandbox-files.js";
import { createSandboxKill } from "./sandbox-kill.js";
import { createSandboxLifetime } from "./sandbox-lifetime.js";
import { createSandboxPause } from "./sandbox-pause.js";
import { createSandboxPorts } from "./sandbox-ports.js";
import { rememberOrigin } from "./sandbox-origin.js";
import { createSandboxSnapshot } from "./sandbox-snapshot.js";
import { createSandboxTerminals } from "./sandbox-terminals.js";
import type { SandboxContext } from "./sandbox-context.js";
import { SandboxState } from "./sandbox-state.js";

/**
 * Wraps an adapter's primitives into the full `Sandbox`: option validation, capability checks, closed-state
 * checks, timeouts that kill, output caps, path confinement, secret redaction and the audit record.
 * Adapters never implement these themselves. Each concern is a module of its own (ADR 0022): the shared state
 * (`sandbox-state`), commands, code, files, the audit record and kill; this function only puts them together.
 */
export function createSandboxFromDriver(givenDriver: SandboxDriverV1, context: SandboxContext): Sandbox {
  // Every driver call goes through the state's call channel, which resolved the driver's methods once (ADR 0037).
  const state = new SandboxState(givenDriver, context);
  const { driver } = state;
  const { runCode, createCodeContext } = createSandboxCode(state);
  const kill = createSandboxKill(state);
  const lifetime = createSandboxLifetime(state, givenDriver);
  const pausing = createSandboxPause(state, givenDriver);
  const sandbox: Sandbox = {
    id: driver.id,
    backend: state.backend,
    capabilities: state.capabilities,
    workspace: driver.workspace,
    commands: createSandboxCommands(state),
    runCode,
    createCodeContext,
    files: createSandboxFiles(state),
    terminals: createSandboxTerminals(state),
    ports: createSandboxPorts(state),
    audit: () =>
      buildAuditRecord({
        driver: givenDriver,
        context,
        createdAt: state.createdAt,
        closedAt: state.closedAt,
        secretValues: state.secretValues,
        lifetimeChanges: lifetime.auditRecord(),
        pauses: pausing.auditRecord(),
      }),
    setLifetime: lifetime.setLifetime,
    pause: pausing.pause,
    resume: pausing.resume,
    get paused() {
      return pausing.isPaused();
    },
    snapshot: createSandboxSnapshot(state, givenDriver),
    get closed() {
      return state.closedAt !== null;
    },
    ended: state.endWatch.ended,
    kill,
    [Symbol.asyncDispose]: kill,
  };
  rememberDriver(sandbox, givenDriver);
  rememberOrigin(sandbox, context.provider);
  return sandbox;
}
