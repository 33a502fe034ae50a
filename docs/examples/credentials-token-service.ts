import { createSandbox, credential, revokeOrphanedCredentials, type CreateSandboxOptions, type SandboxProviderV1 } from "@sbx/core";

/**
 * The credentials example of docs/credentials.md, kept as code so it is type-checked and run by
 * contract-tests/credentials-example.test.ts against a local token service (fake and Docker).
 */

// #region source
/**
 * A per-sandbox token from a token service: issued when the sandbox is created, revoked when it ends.
 * `handle` (the sandbox id here) is what a later process uses to revoke after a crash: the token itself is never
 * written to disk.
 */
export function tokenServiceCredential(serviceUrl: string) {
  return credential({
    id: "example-token-service", // stable: a later process matches crashed hosts' records to this source by id
    issue: async ({ sandboxId, signal }) => {
      const response = await fetch(`${serviceUrl}/issue`, { method: "POST", body: sandboxId, signal });
      if (!response.ok) throw new Error(`the token service refused to issue: HTTP ${response.status}`);
      return { value: await response.text(), handle: sandboxId };
    },
    revoke: async ({ sandboxId, handle, signal }) => {
      const response = await fetch(`${serviceUrl}/revoke`, { method: "POST", body: handle ?? sandboxId, signal });
      if (!response.ok) throw new Error(`the token service refused to revoke: HTTP ${response.status}`);
    },
    onEvent: (event) => {
      if (event.type === "revoke-failed") console.error(`token for ${event.sandboxId} not revoked: ${event.error?.message}`);
    },
  });
}
// #endregion source

/** A shell command that calls the service with the sandbox's token and prints the HTTP status (curl, else Python). */
export function callServiceCommand(url: string): string {
  const python = `import os, sys, urllib.error, urllib.request
request = urllib.request.Request(sys.argv[1], headers={"Authorization": "Bearer " + os.environ["SERVICE_TOKEN"]})
try:
    print(urllib.request.urlopen(request, timeout=10).status)
except urllib.error.HTTPError as error:
    print(error.code)`;
  return (
    `if command -v curl >/dev/null 2>&1; then curl -s -o /dev/null -w '%{http_code}' --max-time 10 -H "Authorization: Bearer $SERVICE_TOKEN" '${url}'; ` +
    `else python3 -c '${python}' '${url}'; fi`
  );
}

/** Where the service is, as the host and as the sandbox reach it, and where to run. */
export interface CredentialsExampleOptions {
  /** A target string (`"docker://python:3.12-slim"`) or a provider object. */
  readonly target: string | SandboxProviderV1;
  /** The token service as the host reaches it (issue and revoke run in this process). */
  readonly serviceUrlFromHost: string;
  /** The token service as code in the sandbox reaches it. */
  readonly serviceUrlFromSandbox: string;
  /** Extra create options (for Docker, the network the service is on). */
  readonly createOptions?: CreateSandboxOptions;
}

/** Runs the example: the token works inside the sandbox; it is revoked when the block ends. Returns what it saw. */
export async function credentialsExample(options: CredentialsExampleOptions): Promise<{ sandboxId: string; statusInside: string; token: string }> {
  const { target, serviceUrlFromHost, serviceUrlFromSandbox } = options;
  // #region usage
  // Revoke what a crashed earlier run left behind (createSandbox also does this for the sources it is given).
  await revokeOrphanedCredentials({ sources: [tokenServiceCredential(serviceUrlFromHost)] });

  await using sandbox = await createSandbox(target, {
    ...options.createOptions,
    network: { egress: "allow" }, // the sandbox calls the token service
    secrets: { SERVICE_TOKEN: tokenServiceCredential(serviceUrlFromHost) }, // issued for this sandbox only
  });
  const result = await sandbox.commands.run(callServiceCommand(`${serviceUrlFromSandbox}/check`));
  console.log(result.stdout); // 200: the token works inside the sandbox
  console.log(sandbox.audit().credentials); // [{ name: "SERVICE_TOKEN", outcome: "active", ... }], never the value
  // #endregion usage
  // Only for the test: read the token back, to show the service refuses it once the sandbox has ended.
  const token = (await sandbox.commands.run(`printf '%s' "$SERVICE_TOKEN"`)).stdout;
  return { sandboxId: sandbox.id, statusInside: result.stdout.trim(), token };
}
