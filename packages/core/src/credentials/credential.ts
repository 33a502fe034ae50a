import { CREDENTIAL_SOURCE_MARKER, credentialSourceSchema, type CredentialSource, type CredentialSourceInput } from "../v1/credentials.js";
import { validate } from "../security/validate.js";

/**
 * Declares a scoped credential: issued for each sandbox when it is created, exposed to it as a secret, and revoked
 * when it ends (kill, disposal, lifetime expiry, the sandbox lost; after a host crash, by `revokeOrphanedCredentials`).
 * @example
 * const token = credential({ id: "github-branch-token", issue: ({ sandboxId }) => mintToken(sandboxId), revoke: ({ value }) => revokeToken(value) });
 * await using sandbox = await createSandbox("docker://python:3.12-slim", { secrets: { GITHUB_TOKEN: token } });
 */
export function credential(options: CredentialSourceInput): CredentialSource {
  const parsed = validate(credentialSourceSchema, options, "credential");
  return Object.freeze({ ...parsed, [CREDENTIAL_SOURCE_MARKER]: true as const });
}
