import { spawn } from "node:child_process";
import { mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from "node:fs/promises";
import { hostname, tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  auditRecordSchema,
  connectSandbox,
  createSandbox,
  credential,
  CredentialRevocationError,
  isSbxError,
  revokeOrphanedCredentials,
  SandboxNotFoundError,
  type CredentialEvent,
  type CredentialRevokeRequest,
  type CredentialSourceInput,
} from "../src/index.ts";
import type { SpawnRequest, SpawnedProcess } from "../src/adapter.ts";
import { processStartTime, recordFileName } from "../src/credentials/credential-store.ts";
import { caught } from "./support/caught.ts";
import { createMemoryProvider, MemoryDriver } from "./support/memory-driver.ts";

let stateDirectory: string;
const previousStateDirectory = process.env.SBX_STATE_DIR;

beforeEach(async () => {
  stateDirectory = await mkdtemp(join(tmpdir(), "sbx-credentials-test-"));
  process.env.SBX_STATE_DIR = stateDirectory;
});

afterEach(async () => {
  if (previousStateDirectory === undefined) delete process.env.SBX_STATE_DIR;
  else process.env.SBX_STATE_DIR = previousStateDirectory;
  await rm(stateDirectory, { recursive: true, force: true });
});

const recordsFolder = () => join(stateDirectory, "credentials");
const recordFiles = async () => (await readdir(recordsFolder()).catch(() => [])).filter((name) => name.endsWith(".json"));

/** A token service in a variable: issues `token-<sandboxId>-<n>`, records every issue and revoke. */
function tokenSource(overrides: Partial<CredentialSourceInput> = {}) {
  const issued: Array<{ sandboxId: string; name: string; value: string }> = [];
  const revoked: CredentialRevokeRequest[] = [];
  const events: CredentialEvent[] = [];
  const source = credential({
    id: `test-token-${Math.random().toString(16).slice(2)}`,
    retryDelayMs: 1,
    issue: ({ sandboxId, name }) => {
      const value = `token-${sandboxId}-${issued.length + 1}-${Math.random().toString(16).slice(2)}`;
      issued.push({ sandboxId, name, value });
      return { value, handle: `handle-${issued.length}` };
    },
    revoke: (request) => {
      revoked.push(request);
    },
    onEvent: (event) => events.push(event),
    ...overrides,
  });
  return { source, issued, revoked, events };
}

async function waitFor(condition: () => boolean, what: string): Promise<void> {
  for (let attempt = 0; attempt < 400; attempt++) {
    if (condition()) return;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error(`timed out waiting for ${what}`);
}

/** A memory driver that can be "lost": every call then fails with SandboxNotFoundError, as a backend reports a vanished sandbox. */
class LosableDriver extends MemoryDriver {
  lost = false;
  override async spawn(request: SpawnRequest): Promise<SpawnedProcess> {
    if (this.lost) throw new SandboxNotFoundError({ sandboxId: this.id, backend: "memory", message: `Sandbox ${this.id} is gone.` });
    return super.spawn(request);
  }
}

describe("scoped credentials: issue", () => {
  it("issues once per sandbox, after it exists, and exposes the value to commands and code as a secret", async () => {
    const token = tokenSource();
    const provider = createMemoryProvider({ driver: { codeChannel: true } });
    await using sandbox = await createSandbox(provider, { secrets: { GITHUB_TOKEN: token.source, STATIC: "static-secret-value" } });
    expect(token.issued).toEqual([{ sandboxId: sandbox.id, name: "GITHUB_TOKEN", value: expect.stringMatching(/^token-/) }]);
    const value = token.issued[0]!.value;
    expect((await sandbox.commands.run("env GITHUB_TOKEN")).stdout).toBe(value);
    expect((await sandbox.commands.run("env STATIC")).stdout).toBe("static-secret-value");
    await sandbox.runCode("print(1)");
    expect(provider.drivers[0]!.codeRequests[0]!.env.GITHUB_TOKEN).toBe(value);
    // Adapters never see the source at create; spawn requests name the issued value as a secret to redact.
    expect(provider.drivers[0]!.processes[0]!.request.secretValues).toContain(value);
    const audit = auditRecordSchema.parse(sandbox.audit());
    expect(JSON.stringify(audit)).not.toContain(value);
    expect(audit.environment.secrets).toEqual(["GITHUB_TOKEN", "STATIC"]);
    expect(audit.credentials).toEqual([
      {
        name: "GITHUB_TOKEN",
        source: token.source.id,
        issuedAt: expect.any(String),
        expiresAt: null,
        revokedAt: null,
        endReason: null,
        outcome: "active",
        revokeAttempts: 0,
        error: null,
      },
    ]);
    expect(token.events.map((event) => event.type)).toEqual(["issued"]);
  });

  it("keeps a 0600 durable record without the value (only the handle) while the credential is live", async () => {
    const token = tokenSource();
    const sandbox = await createSandbox(createMemoryProvider(), { secrets: { GITHUB_TOKEN: token.source } });
    const [file] = await recordFiles();
    const path = join(recordsFolder(), file!);
    expect((await stat(path)).mode & 0o777).toBe(0o600);
    expect((await stat(recordsFolder())).mode & 0o777).toBe(0o700);
    const text = await readFile(path, "utf8");
    expect(text).not.toContain(token.issued[0]!.value);
    expect(JSON.parse(text)).toMatchObject({
      sourceId: token.source.id,
      name: "GITHUB_TOKEN",
      sandboxId: sandbox.id,
      ownerPid: process.pid,
      state: "live",
      handle: "handle-1",
      value: null,
    });
    await sandbox.kill();
    expect(await recordFiles()).toEqual([]);
  });

  it("stores the value in the record only when the source sets persistValue", async () => {
    const token = tokenSource({ persistValue: true });
    await using sandbox = await createSandbox(createMemoryProvider(), { secrets: { GITHUB_TOKEN: token.source } });
    const [file] = await recordFiles();
    expect(JSON.parse(await readFile(join(recordsFolder(), file!), "utf8")).value).toBe(token.issued[0]!.value);
    expect(sandbox.closed).toBe(false);
  });

  it("a failing issue destroys the sandbox, revokes what was (or may have been) issued and raises SBX_CREDENTIAL_ISSUE", async () => {
    const first = tokenSource();
    const failing = tokenSource({ issue: () => Promise.reject(new Error("token service down")) });
    const provider = createMemoryProvider();
    const error = await caught(() => createSandbox(provider, { secrets: { A_TOKEN: first.source, B_TOKEN: failing.source } }));
    expect(isSbxError(error, "SBX_CREDENTIAL_ISSUE")).toBe(true);
    expect(error.secretName).toBe("B_TOKEN");
    expect(error.retryable).toBe(true);
    expect(provider.drivers[0]!.destroyCalls).toBe(1);
    expect(first.revoked).toEqual([expect.objectContaining({ name: "A_TOKEN", value: first.issued[0]!.value, reason: "create-failed" })]);
    // The service may have issued before failing: it is asked to revoke by sandbox id (no value, no handle).
    expect(failing.revoked).toEqual([
      expect.objectContaining({ sandboxId: provider.drivers[0]!.id, name: "B_TOKEN", value: null, handle: null, reason: "create-failed" }),
    ]);
    expect(await recordFiles()).toEqual([]);
  });

  it("an issue result that is not a credential is refused, and whatever it may have issued is still revoked", async () => {
    const odd = tokenSource({ issue: () => ({ token: "wrong-shape" }) as never });
    const provider = createMemoryProvider();
    const error = await caught(() => createSandbox(provider, { secrets: { A_TOKEN: odd.source } }));
    expect(isSbxError(error, "SBX_CREDENTIAL_ISSUE")).toBe(true);
    expect(odd.revoked).toEqual([expect.objectContaining({ value: null, reason: "create-failed" })]);
    expect(await recordFiles()).toEqual([]);
  });

  it("an issue that hangs is stopped at the source's timeoutMs", async () => {
    let aborted = false;
    const hanging = tokenSource({
      timeoutMs: 50,
      issue: ({ signal }) => new Promise<string>(() => signal.addEventListener("abort", () => (aborted = true))),
    });
    const error = await caught(() => createSandbox(createMemoryProvider(), { secrets: { A_TOKEN: hanging.source } }));
    expect(isSbxError(error, "SBX_CREDENTIAL_ISSUE")).toBe(true);
    expect(aborted).toBe(true);
  });

  it("credential() validates its options and connectSandbox() refuses credential sources", async () => {
    const invalid = await caught(() => credential({ id: "has spaces", issue: () => "x", revoke: () => {} }));
    expect(isSbxError(invalid, "SBX_INVALID_ARGUMENT")).toBe(true);
    expect(invalid.field).toBe("credential.id");
    const notFunction = await caught(() => credential({ id: "ok", issue: "x" as never, revoke: () => {} }));
    expect(notFunction.field).toBe("credential.issue");
    const token = tokenSource();
    const refused = await caught(() =>
      connectSandbox(createMemoryProvider({ connectable: true, capabilities: undefined }), "memory-9", { secrets: { GITHUB_TOKEN: token.source } }),
    );
    expect(isSbxError(refused, "SBX_INVALID_ARGUMENT")).toBe(true);
    expect(refused.field).toBe("options.secrets.GITHUB_TOKEN");
    expect(token.issued).toEqual([]);
  });
});

describe("scoped credentials: revoked exactly once however the sandbox ends", () => {
  it("kill() revokes once, with the value and the handle; a second kill() does not revoke again", async () => {
    const token = tokenSource();
    const sandbox = await createSandbox(createMemoryProvider(), { secrets: { GITHUB_TOKEN: token.source } });
    await sandbox.kill();
    await sandbox.kill();
    expect(token.revoked).toEqual([
      {
        sandboxId: sandbox.id,
        name: "GITHUB_TOKEN",
        value: token.issued[0]!.value,
        handle: "handle-1",
        reason: "kill",
        signal: expect.any(AbortSignal),
      },
    ]);
    const entry = auditRecordSchema.parse(sandbox.audit()).credentials![0]!;
    expect(entry).toMatchObject({ outcome: "revoked", endReason: "kill", revokeAttempts: 1, error: null });
    expect(Date.parse(entry.revokedAt!)).toBeGreaterThanOrEqual(Date.parse(entry.issuedAt));
  });

  it("`await using` disposal revokes once", async () => {
    const token = tokenSource();
    {
      await using sandbox = await createSandbox(createMemoryProvider(), { secrets: { GITHUB_TOKEN: token.source } });
      expect(sandbox.closed).toBe(false);
    }
    expect(token.revoked.map((request) => request.reason)).toEqual(["kill"]);
  });

  it("the end of the sandbox's lifetime revokes once, without anyone calling kill()", async () => {
    const token = tokenSource();
    const sandbox = await createSandbox(createMemoryProvider(), { secrets: { GITHUB_TOKEN: token.source }, timeoutMs: 1_000 });
    await waitFor(() => token.revoked.length > 0, "the lifetime revocation");
    expect(token.revoked.map((request) => request.reason)).toEqual(["lifetime"]);
    await waitFor(() => sandbox.audit().credentials![0]!.outcome === "revoked", "the audit outcome");
    await sandbox.kill();
    expect(token.revoked).toHaveLength(1);
    expect(sandbox.audit().credentials![0]!.endReason).toBe("lifetime");
  });

  it("a backend call failing with SandboxNotFoundError (the sandbox lost) revokes once", async () => {
    const token = tokenSource();
    const driver = new LosableDriver({ id: "losable-1" });
    const provider = { ...createMemoryProvider(), create: async () => driver };
    const sandbox = await createSandbox(provider, { secrets: { GITHUB_TOKEN: token.source } });
    driver.lost = true;
    const error = await caught(() => sandbox.commands.run("echo hi"));
    expect(isSbxError(error, "SBX_SANDBOX_NOT_FOUND")).toBe(true);
    await waitFor(() => token.revoked.length > 0, "the lost revocation");
    expect(token.revoked.map((request) => request.reason)).toEqual(["lost"]);
    await sandbox.kill();
    expect(token.revoked).toHaveLength(1);
  });

  it("kill() revokes even when destroying the sandbox fails, and reports the destroy failure", async () => {
    const token = tokenSource();
    const sandbox = await createSandbox(createMemoryProvider({ driver: { destroyFailure: "engine said no" } }), {
      secrets: { GITHUB_TOKEN: token.source },
    });
    const error = await caught(() => sandbox.kill());
    expect(isSbxError(error, "SBX_PROVIDER")).toBe(true);
    expect(token.revoked.map((request) => request.reason)).toEqual(["kill"]);
  });
});

describe("scoped credentials: failed revocation is reported, bounded and retried later", () => {
  it("kill() rejects with CredentialRevocationError after bounded attempts; events and audit say so without the value; the record is kept", async () => {
    let attempts = 0;
    let leaked = "";
    const token = tokenSource({
      revokeAttempts: 3,
      revoke: ({ value }) => {
        attempts++;
        leaked = value ?? "";
        throw new Error(`token service refused ${value}`);
      },
    });
    const sandbox = await createSandbox(createMemoryProvider(), { secrets: { GITHUB_TOKEN: token.source } });
    const error = await caught(() => sandbox.kill());
    expect(error).toBeInstanceOf(CredentialRevocationError);
    expect(error.code).toBe("SBX_CREDENTIAL_REVOCATION");
    expect(error.failures).toEqual([
      { secretName: "GITHUB_TOKEN", sourceId: token.source.id, attempts: 3, message: "token service refused [redacted]" },
    ]);
    expect(sandbox.closed).toBe(true);
    expect(attempts).toBe(3);
    expect(leaked).toBe(token.issued[0]!.value);
    expect(error.message).not.toContain(leaked);
    expect(token.events.map((event) => event.type)).toEqual(["issued", "revoke-attempt-failed", "revoke-attempt-failed", "revoke-failed"]);
    for (const event of token.events.slice(1)) expect(event.error?.message).toBe("token service refused [redacted]");
    // The same outcome on every later kill(): the failure is not swallowed by a retry of the call.
    expect(await caught(() => sandbox.kill())).toBe(error);
    const audit = sandbox.audit();
    expect(JSON.stringify(audit)).not.toContain(leaked);
    expect(audit.credentials![0]).toMatchObject({
      outcome: "revoke-failed",
      revokeAttempts: 3,
      error: "token service refused [redacted]",
      revokedAt: null,
    });
    const [file] = await recordFiles();
    expect(JSON.parse(await readFile(join(recordsFolder(), file!), "utf8"))).toMatchObject({
      state: "revoke-failed",
      revokeAttempts: 3,
      value: null,
    });

    // A later run with a working source (same id) revokes it and removes the record.
    const recovered: CredentialRevokeRequest[] = [];
    const working = credential({ id: token.source.id, issue: () => "unused", revoke: (request) => void recovered.push(request) });
    const result = await revokeOrphanedCredentials({ sources: [working] });
    expect(result.revoked).toEqual([
      { name: "GITHUB_TOKEN", sourceId: token.source.id, sandboxId: sandbox.id, ownerPid: process.pid, attempts: 1, error: null },
    ]);
    expect(result.failed).toEqual([]);
    expect(recovered).toEqual([expect.objectContaining({ sandboxId: sandbox.id, value: null, handle: "handle-1", reason: "orphaned" })]);
    expect(await recordFiles()).toEqual([]);
  });

  it("a revoke that hangs is cut off at timeoutMs on every attempt", async () => {
    const token = tokenSource({ timeoutMs: 30, revokeAttempts: 2, revoke: () => new Promise<void>(() => {}) });
    const sandbox = await createSandbox(createMemoryProvider(), { secrets: { GITHUB_TOKEN: token.source } });
    const error = await caught(() => sandbox.kill());
    expect(error.failures[0].attempts).toBe(2);
    expect(error.failures[0].message).toBe("did not finish within 30 ms");
  });

  it("without an onEvent listener a final failure is also a process warning", async () => {
    const warnings: string[] = [];
    const onWarning = (warning: Error) => warnings.push(warning.message);
    process.on("warning", onWarning);
    try {
      const source = credential({
        id: "warned-source",
        retryDelayMs: 0,
        revokeAttempts: 1,
        issue: () => "warned-token-value",
        revoke: () => Promise.reject(new Error("no")),
      });
      const sandbox = await createSandbox(createMemoryProvider(), { secrets: { TOKEN: source } });
      await caught(() => sandbox.kill());
      await waitFor(() => warnings.length > 0, "the warning");
      expect(warnings[0]).toContain("revoking credential TOKEN (source warned-source)");
      expect(warnings[0]).not.toContain("warned-token-value");
    } finally {
      process.off("warning", onWarning);
    }
  });
});

describe("scoped credentials: a dead host process's credentials", () => {
  it("are revoked by the next process from the durable record after the owner is SIGKILLed", async () => {
    // The child creates a sandbox on a memory provider with a credential, reports the issued value, and is SIGKILLed.
    const coreEntry = new URL("../dist/index.js", import.meta.url).href;
    const script = `
      const { createSandbox, credential, defineCapabilities } = await import(${JSON.stringify(coreEntry)});
      const audit = { requested: null, applied: null, enforcement: "none" };
      const provider = { specificationVersion: "sbx-v1", backend: "crashy", packageName: "crashy", isolating: false,
        capabilities: defineCapabilities({ languages: [] }),
        detect: async () => ({ backend: "crashy", usable: true, reason: "", remedy: "", isolating: false }),
        create: async () => ({ id: "crashy-1", workspace: "/w", audit: { backendVersion: "1", policies: { network: audit, limits: audit, mounts: audit, user: audit, lifetime: audit } },
          spawn: async () => { throw new Error("no"); }, destroy: async () => {} }) };
      const token = credential({ id: "crash-test-token", persistValue: true, issue: ({ sandboxId }) => ({ value: "crash-value-" + sandboxId, handle: "crash-handle" }), revoke: () => {} });
      const sandbox = await createSandbox(provider, { secrets: { GITHUB_TOKEN: token } });
      process.stdout.write("ready " + sandbox.id + "\\n");
      setInterval(() => {}, 1000);
    `;
    const child = spawn(process.execPath, ["--input-type=module", "-e", script], {
      env: { ...process.env, SBX_STATE_DIR: stateDirectory },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let output = "";
    let errors = "";
    child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on("data", (chunk: Buffer) => (errors += chunk.toString()));
    const exited = new Promise<string | null>((resolve) => child.on("exit", (_code, signal) => resolve(signal)));
    await waitFor(() => output.includes("ready") || child.exitCode !== null, `the child to create its sandbox (${errors})`);
    expect(output).toBe("ready crashy-1\n");

    const revoked: CredentialRevokeRequest[] = [];
    const source = credential({ id: "crash-test-token", issue: () => "unused", revoke: (request) => void revoked.push(request) });
    // While the owner lives, its records are not touched.
    expect(await revokeOrphanedCredentials({ sources: [source] })).toEqual({ revoked: [], failed: [], skipped: 1, refused: [] });
    child.kill("SIGKILL");
    expect(await exited).toBe("SIGKILL");
    const result = await revokeOrphanedCredentials({ sources: [source] });
    expect(result.revoked).toEqual([
      { name: "GITHUB_TOKEN", sourceId: "crash-test-token", sandboxId: "crashy-1", ownerPid: child.pid, attempts: 1, error: null },
    ]);
    expect(revoked).toEqual([
      expect.objectContaining({ sandboxId: "crashy-1", value: "crash-value-crashy-1", handle: "crash-handle", reason: "orphaned" }),
    ]);
    expect(await recordFiles()).toEqual([]);
    // Exactly once: a second run finds nothing.
    expect(await revokeOrphanedCredentials({ sources: [source] })).toEqual({ revoked: [], failed: [], skipped: 0, refused: [] });
  });

  it("createSandbox() revokes a dead owner's credentials of the same source before issuing new ones; other sources' records are left alone", async () => {
    const child = spawn(process.execPath, ["-e", "0"]);
    await new Promise((resolve) => child.on("exit", resolve));
    await mkdir(recordsFolder(), { recursive: true, mode: 0o700 });
    const record = (sourceId: string) => ({
      version: 1 as const,
      sourceId,
      name: "OLD",
      sandboxId: `old-${sourceId}`,
      backend: "memory",
      ownerPid: child.pid!,
      ownerHost: hostname(),
      ownerStartTime: null,
      state: "live" as const,
      recordedAt: new Date().toISOString(),
      issuedAt: new Date().toISOString(),
      expiresAt: null,
      handle: null,
      value: null,
      revokeAttempts: 0,
      lastError: null,
    });
    await writeFile(join(recordsFolder(), recordFileName(record("auto-source"))), JSON.stringify(record("auto-source")), { mode: 0o600 });
    await writeFile(join(recordsFolder(), recordFileName(record("someone-else"))), JSON.stringify(record("someone-else")), { mode: 0o600 });
    const token = tokenSource({ id: "auto-source" });
    await using sandbox = await createSandbox(createMemoryProvider(), { secrets: { GITHUB_TOKEN: token.source } });
    expect(token.revoked).toEqual([expect.objectContaining({ sandboxId: "old-auto-source", name: "OLD", reason: "orphaned", value: null })]);
    const files = await recordFiles();
    expect(files).toHaveLength(2);
    expect(files).toContain(recordFileName(record("someone-else")));
    expect(files).toContain(
      recordFileName({
        sourceId: "auto-source",
        sandboxId: sandbox.id,
        name: "GITHUB_TOKEN",
        ownerPid: process.pid,
        ownerStartTime: processStartTime(process.pid),
      }),
    );
    expect(sandbox.closed).toBe(false);
  });
});

describe("scoped credentials: aborting creation", () => {
  it("aborting createSandbox() while a credential is being issued stops the issue, destroys the sandbox and leaves no record", async () => {
    const controller = new AbortController();
    const token = tokenSource({ issue: () => new Promise<string>(() => controller.abort()) });
    const provider = createMemoryProvider();
    const error = await caught(() => createSandbox(provider, { signal: controller.signal, secrets: { GITHUB_TOKEN: token.source } }));
    expect(isSbxError(error, "SBX_ABORTED")).toBe(true);
    expect(provider.drivers[0]!.destroyCalls).toBe(1);
    expect(await recordFiles()).toEqual([]);
  });
});

describe("scoped credentials: who counts as the owner", () => {
  async function writeOrphan(fields: Record<string, unknown>): Promise<void> {
    await mkdir(recordsFolder(), { recursive: true, mode: 0o700 });
    const record = {
      version: 1,
      sourceId: "owner-test",
      name: "TOKEN",
      sandboxId: "old-sandbox",
      backend: "memory",
      ownerPid: process.pid,
      ownerHost: hostname(),
      ownerStartTime: null,
      state: "live",
      recordedAt: new Date().toISOString(),
      issuedAt: new Date().toISOString(),
      expiresAt: null,
      handle: "h",
      value: null,
      revokeAttempts: 0,
      lastError: null,
      ...fields,
    };
    await writeFile(join(recordsFolder(), recordFileName(record as Parameters<typeof recordFileName>[0])), JSON.stringify(record), { mode: 0o600 });
  }

  it("a live pid that started at another time is a reused pid, not the owner: the record is revoked", async () => {
    await writeOrphan({ ownerStartTime: "1" });
    const revoked: CredentialRevokeRequest[] = [];
    const source = credential({ id: "owner-test", issue: () => "unused", revoke: (request) => void revoked.push(request) });
    const result = await revokeOrphanedCredentials({ sources: [source] });
    expect(result.revoked.map((entry) => entry.sandboxId)).toEqual(["old-sandbox"]);
    expect(revoked).toHaveLength(1);
  });

  it("a live owner (this process, same start time) keeps its record", async () => {
    const { readFileSync } = await import("node:fs");
    const stat = readFileSync(`/proc/${process.pid}/stat`, "utf8");
    await writeOrphan({ ownerStartTime: stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19] });
    const source = credential({ id: "owner-test", issue: () => "unused", revoke: () => {} });
    expect(await revokeOrphanedCredentials({ sources: [source] })).toEqual({ revoked: [], failed: [], skipped: 1, refused: [] });
    expect(await recordFiles()).toHaveLength(1);
  });

  it("two runs at once revoke a dead owner's credential once: the record is claimed by an atomic rename", async () => {
    const child = spawn(process.execPath, ["-e", "0"]);
    await new Promise((resolve) => child.on("exit", resolve));
    await writeOrphan({ ownerPid: child.pid });
    const revoked: CredentialRevokeRequest[] = [];
    const source = credential({
      id: "owner-test",
      issue: () => "unused",
      revoke: async (request) => {
        revoked.push(request);
        await new Promise((resolve) => setTimeout(resolve, 20));
      },
    });
    const results = await Promise.all([revokeOrphanedCredentials({ sources: [source] }), revokeOrphanedCredentials({ sources: [source] })]);
    expect(revoked).toHaveLength(1);
    expect(results.map((result) => result.revoked.length).sort()).toEqual([0, 1]);
    expect(await recordFiles()).toEqual([]);
  });
});

describe("scoped credentials: expiry", () => {
  it("an expiry returned by issue is recorded in the audit record and the durable record", async () => {
    const expiresAt = new Date(Date.UTC(2030, 0, 1, 12, 0, 0));
    const token = tokenSource({ issue: () => ({ value: "expiring-token-value", expiresAt }) });
    await using sandbox = await createSandbox(createMemoryProvider(), { secrets: { TOKEN: token.source } });
    expect(sandbox.audit().credentials![0]!.expiresAt).toBe("2030-01-01T12:00:00.000Z");
    const [file] = await recordFiles();
    expect(JSON.parse(await readFile(join(recordsFolder(), file!), "utf8")).expiresAt).toBe("2030-01-01T12:00:00.000Z");
  });
});
