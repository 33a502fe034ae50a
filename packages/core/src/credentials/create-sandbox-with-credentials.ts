import { InvalidArgumentError } from "../errors/index.js";
import { isCredentialSource, type CredentialSource } from "../v1/credentials.js";
import type { ResolvedCreateOptions } from "../v1/options.js";
import type { SandboxDriverV1, SandboxProviderV1 } from "../v1/provider.js";
import type { SandboxLogger } from "../v1/logging.js";
import type { Sandbox } from "../v1/sandbox.js";
import type { PooledSandboxFacts } from "../pool/pooled-sandbox-facts.js";
import { defaultStateDirectory } from "./credential-store.js";
import { createSandboxFromDriver } from "../sandbox/create-sandbox-from-driver.js";
import { revokeOrphanedCredentials } from "./revoke-orphaned-credentials.js";
import { SandboxCredentials } from "./sandbox-credentials.js";

const SECRET_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/**
 * Takes the credential sources out of `options.secrets` (values made by `credential()`), leaving the static
 * strings for the options schema. Adapters never see the sources; they get issued values through each spawn's env.
 */
export function splitCredentialSources<Options>(options: Options): { options: Options; sources: Map<string, CredentialSource> } {
  const sources = new Map<string, CredentialSource>();
  const secrets = (options as { secrets?: unknown } | undefined)?.secrets;
  if (typeof secrets !== "object" || secrets === null || Array.isArray(secrets)) return { options, sources };
  const staticSecrets: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(secrets)) {
    if (!isCredentialSource(value)) {
      staticSecrets[name] = value;
      continue;
    }
    if (!SECRET_NAME.test(name))
      throw new InvalidArgumentError({
        field: `options.secrets.${name}`,
        message: `Invalid options.secrets: invalid key: must be a valid environment variable name.`,
      });
    sources.set(name, value);
  }
  return { options: { ...options, secrets: staticSecrets } as Options, sources };
}

/** Everything needed to finish creating a sandbox that has credentials. */
export interface CredentialedCreation {
  readonly driver: SandboxDriverV1;
  readonly provider: SandboxProviderV1;
  readonly target: string;
  readonly options: ResolvedCreateOptions;
  readonly sources: ReadonlyMap<string, CredentialSource>;
  readonly signal: AbortSignal | undefined;
  /** When the backend was asked to create the sandbox (epoch ms): its lifetime ends at most `timeoutMs` after. */
  readonly createStartedAt: number;
  /** The debug logger, when one is on. */
  readonly logger?: SandboxLogger;
  /** Set for a sandbox handed out by a pool: the credentials then live from acquire for the pool's lifetime (ADR 0050). */
  readonly pool?: PooledSandboxFacts;
}

/** Revokes credentials a dead process left behind for these sources; failures are reported by the sources' events, never thrown here. */
export async function revokeOrphansBeforeIssuing(sources: ReadonlyMap<string, CredentialSource>, signal: AbortSignal | undefined): Promise<void> {
  await revokeOrphanedCredentials({ sources: [...new Set(sources.values())], signal }).catch((error: unknown) => {
    process.emitWarning(`sbx: revoking orphaned credentials failed: ${error instanceof Error ? error.message : String(error)}`, {
      code: "SBX_CREDENTIAL_REVOCATION",
    });
  });
}

/**
 * Issues the credentials for a freshly created sandbox and builds the `Sandbox` around it. If issuing fails, the
 * sandbox is destroyed and whatever was issued is revoked before the `CredentialIssueError` is thrown.
 */
export async function createSandboxWithCredentials(creation: CredentialedCreation): Promise<Sandbox> {
  const { driver, provider, options, sources } = creation;
  const credentials = new SandboxCredentials({
    sources,
    backend: provider.backend,
    stateDirectory: defaultStateDirectory(),
    staticSecretValues: Object.values(options.secrets).filter((value) => value.length > 0),
  });
  let values: Record<string, string>;
  try {
    values = await credentials.issueAll(driver.id, creation.signal);
  } catch (error) {
    await driver.destroy().catch(() => {});
    await credentials.revokeAll("create-failed");
    throw error;
  }
  try {
    // The call channel adds the issued values to spawn requests, notices a lost sandbox and revokes after destroy.
    const sandbox = createSandboxFromDriver(driver, {
      provider,
      target: creation.target,
      options: { ...options, secrets: { ...options.secrets, ...values } },
      credentials,
      logger: creation.logger,
      lifetimeEndsAt: creation.pool ? creation.pool.acquiredAt + creation.pool.lifetimeMs : creation.createStartedAt + options.timeoutMs,
      pool: creation.pool,
    });
    const pool = creation.pool;
    credentials.watchLifetime(pool ? pool.acquiredAt + pool.lifetimeMs : creation.createStartedAt + options.timeoutMs);
    return sandbox;
  } catch (error) {
    // Core refused the sandbox after the credentials were issued (for example an issued value it cannot redact safely): nothing may leak.
    await driver.destroy().catch(() => {});
    await credentials.revokeAll("create-failed");
    throw error;
  }
}
