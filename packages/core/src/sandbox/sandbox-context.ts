import type { ChannelCredentials } from "../channel/driver-channel.js";
import type { CredentialAuditEntry } from "../v1/credentials.js";
import type { SandboxLogger } from "../v1/logging.js";
import type { ResolvedCreateOptions } from "../v1/options.js";
import type { SandboxProviderV1 } from "../v1/provider.js";
import type { PooledSandboxFacts } from "../pool/pooled-sandbox-facts.js";

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
  /**
   * Epoch milliseconds the sandbox's lifetime ends (when the backend was asked to create it, plus `options.timeoutMs`):
   * core's timer closes the sandbox then and resolves `ended` with `"lifetime"` (ADR 0045). Default: now plus
   * `options.timeoutMs`, or no timer for a reconnected sandbox (its lifetime began elsewhere).
   */
  readonly lifetimeEndsAt?: number;
  /** How long `kill()` waits for the backend to destroy the sandbox before rejecting with `TimeoutError`. Default 30000. */
  readonly destroyTimeoutMs?: number;
  /**
   * The sandbox's scoped credentials (see `credential()`): their audit entries go into the audit record, and the call
   * channel adds issued values to spawn requests, starts revocation when the sandbox is lost and revokes after destroy.
   */
  readonly credentials?: ChannelCredentials & {
    auditEntries(): CredentialAuditEntry[];
    /** Moves the credentials' revocation to a new end of the sandbox's lifetime (`setLifetime`, ADR 0050). */
    watchLifetime?(deadline: number): void;
  };
  /** The debug logger: every driver call is logged by the call channel. Default none. */
  readonly logger?: SandboxLogger;
  /** Set for a sandbox handed out by a pool: its create and acquire times, recorded as `policies.pool` (ADR 0050). Default none. */
  readonly pool?: PooledSandboxFacts;
}
