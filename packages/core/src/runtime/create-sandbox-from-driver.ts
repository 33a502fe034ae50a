import type { SandboxDriverV1 } from "../v1/provider.js";
import type { Sandbox } from "../v1/sandbox.js";
import { buildAuditRecord } from "./audit-record.js";
import { withDriverDefaults } from "./driver-defaults.js";
import { rememberDriver } from "./native-handle.js";
import { createSandboxCode } from "./sandbox-code.js";
import { createSandboxCommands } from "./sandbox-commands.js";
import { createSandboxFiles } from "./sandbox-files.js";
import { createSandboxKill } from "./sandbox-kill.js";
import type { SandboxContext } from "./sandbox-context.js";
import { SandboxState } from "./sandbox-state.js";

/**
 * Wraps an adapter's primitives into the full `Sandbox`: option validation, capability checks, closed-state
 * checks, timeouts that kill, output caps, path confinement, secret redaction and the audit record.
 * Adapters never implement these themselves. Each concern is a module of its own (ADR 0022): the shared state
 * (`sandbox-state`), commands, code, files, the audit record and kill; this function only puts them together.
 */
export function createSandboxFromDriver(givenDriver: SandboxDriverV1, context: SandboxContext): Sandbox {
  // The optional file operations a driver leaves out come from core's POSIX defaults on its `spawn` (ADR 0020).
  const driver = withDriverDefaults(givenDriver);
  const state = new SandboxState(driver, context);
  const { runCode, createCodeContext } = createSandboxCode(state);
  const kill = createSandboxKill(state);
  const sandbox: Sandbox = {
    id: driver.id,
    backend: state.backend,
    capabilities: state.capabilities,
    workspace: driver.workspace,
    commands: createSandboxCommands(state),
    runCode,
    createCodeContext,
    files: createSandboxFiles(state),
    audit: () => buildAuditRecord({ driver, context, createdAt: state.createdAt, closedAt: state.closedAt, secretValues: state.secretValues }),
    get closed() {
      return state.closedAt !== null;
    },
    kill,
    [Symbol.asyncDispose]: kill,
  };
  rememberDriver(sandbox, driver);
  return sandbox;
}
