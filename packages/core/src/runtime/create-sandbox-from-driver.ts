import type { ChannelCredentials } from "../channel/driver-channel.js";
import type { CredentialAuditEntry } from "../v1/credentials.js";
import type { SandboxLogger } from "../v1/logging.js";
import type { ResolvedCreateOptions } from "../v1/options.js";
import type { SandboxDriverV1, SandboxProviderV1 } from "../v1/provider.js";
import type { Sandbox } from "../v1/sandbox.js";
import { buildAuditRecord } from "./audit-record.js";
import { rememberDriver } from "./native-handle.js";
import { createSandboxCode } from "./sandbox-code.js";
import { createSandboxCommands } from "./sandbox-commands.js";
import { createSandboxFiles } from "./sandbox-files.js";
import { createSandboxKill } from "./sandbox-kill.js";
import { SandboxState } from "./sandbox-state.js";

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
  /**
   * The sandbox's scoped credentials (see `credential()`): their audit entries go into the audit record, and the call
   * channel adds issued values to spawn requests, starts revocation when the sandbox is lost and revokes after destroy.
   */
  readonly credentials?: ChannelCredentials & { auditEntries(): CredentialAuditEntry[] };
  /** The debug logger: every driver call is logged by the call channel. Default none. */
  readonly logger?: SandboxLogger;
}

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
  const sandbox: Sandbox = {
    id: driver.id,
    backend: state.backend,
    capabilities: state.capabilities,
    workspace: driver.workspace,
    commands: createSandboxCommands(state),
    runCode,
    createCodeContext,
    files: createSandboxFiles(state),
    audit: () =>
      buildAuditRecord({ driver: givenDriver, context, createdAt: state.createdAt, closedAt: state.closedAt, secretValues: state.secretValues }),
    get closed() {
      return state.closedAt !== null;
    },
    kill,
    [Symbol.asyncDispose]: kill,
  };
  rememberDriver(sandbox, givenDriver);
  return sandbox;
}
