import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createSandbox, credential, isSbxError, type CredentialRevokeRequest } from "@sbx/core";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createSandboxProvider } from "../src/index.js";

let stateDirectory: string;
const previousStateDirectory = process.env.SBX_STATE_DIR;

beforeEach(async () => {
  stateDirectory = await mkdtemp(join(tmpdir(), "sbx-fake-credentials-"));
  process.env.SBX_STATE_DIR = stateDirectory;
});

afterEach(async () => {
  if (previousStateDirectory === undefined) delete process.env.SBX_STATE_DIR;
  else process.env.SBX_STATE_DIR = previousStateDirectory;
  await rm(stateDirectory, { recursive: true, force: true });
});

function recordingSource() {
  const revoked: CredentialRevokeRequest[] = [];
  const source = credential({
    id: "fake-test-token",
    issue: ({ sandboxId }) => `fake-issued-${sandboxId}-value`,
    revoke: (request) => void revoked.push(request),
  });
  return { source, revoked };
}

describe("scoped credentials on the fake", () => {
  it("an issued value is redacted from the fake's call record, like a static secret", async () => {
    const provider = createSandboxProvider();
    const { source } = recordingSource();
    await using sandbox = await createSandbox(provider, { secrets: { TOKEN: source } });
    const value = `fake-issued-${sandbox.id}-value`;
    expect((await sandbox.commands.run(`printf '%s' "$TOKEN"`)).stdout).toBe(value);
    const spawn = provider.calls.find((call) => call.operation === "spawn")!;
    expect((spawn.arguments.env as Record<string, string>).TOKEN).toBe("[redacted]");
    expect(JSON.stringify(provider.calls)).not.toContain(value);
  });

  it("a sandbox lost through faults.loseSandbox() has its credential revoked once, with reason lost", async () => {
    const provider = createSandboxProvider();
    const { source, revoked } = recordingSource();
    const sandbox = await createSandbox(provider, { secrets: { TOKEN: source } });
    provider.faults.loseSandbox(sandbox.id);
    const error = await sandbox.commands.run("echo hi").catch((caught: unknown) => caught);
    expect(isSbxError(error, "SBX_SANDBOX_NOT_FOUND")).toBe(true);
    for (let waited = 0; revoked.length === 0 && waited < 200; waited++) await new Promise((resolve) => setTimeout(resolve, 10));
    expect(revoked.map((request) => [request.sandboxId, request.reason])).toEqual([[sandbox.id, "lost"]]);
    await sandbox.kill();
    expect(revoked).toHaveLength(1);
  });
});
