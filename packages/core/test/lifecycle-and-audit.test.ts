import { caught } from "./support/caught.ts";
import { describe, expect, it } from "vitest";
import { createSandbox, ProviderError, SandboxClosedError, type Sandbox } from "../src/index.ts";
import { defineCapabilities } from "../src/adapter.ts";
import { createMemoryProvider } from "./support/memory-driver.ts";

const everything = defineCapabilities({ STATEFUL_CODE: true, BACKGROUND_COMMANDS: true, STDIN: true, languages: ["python"] });

describe("closed state", () => {
  const operations: Array<[string, (sandbox: Sandbox) => Promise<unknown>]> = [
    ["commands.run", (sandbox) => sandbox.commands.run("echo hi")],
    ["commands.start", (sandbox) => sandbox.commands.start("hang")],
    ["runCode", (sandbox) => sandbox.runCode("print(1)")],
    ["createCodeContext", (sandbox) => sandbox.createCodeContext()],
    ["files.write", (sandbox) => sandbox.files.write("a.txt", "x")],
    ["files.read", (sandbox) => sandbox.files.read("a.txt")],
    ["files.list", (sandbox) => sandbox.files.list(".")],
    ["files.stat", (sandbox) => sandbox.files.stat("a.txt")],
    ["files.exists", (sandbox) => sandbox.files.exists("a.txt")],
    ["files.remove", (sandbox) => sandbox.files.remove("a.txt")],
    ["files.mkdir", (sandbox) => sandbox.files.mkdir("d")],
    ["files.rename", (sandbox) => sandbox.files.rename("a.txt", "b.txt")],
    ["files.upload", (sandbox) => sandbox.files.upload("/etc/hostname", "h")],
    ["files.download", (sandbox) => sandbox.files.download("a.txt", "/tmp/never-written")],
  ];

  it.each(operations)("%s after kill() → SandboxClosedError naming the sandbox", async (_name, operation) => {
    const provider = createMemoryProvider({ backend: "closing", capabilities: everything, driver: { codeChannel: true, codeContexts: true } });
    const sandbox = await createSandbox(provider);
    await sandbox.kill();
    const error = await caught(() => operation(sandbox));
    expect(error).toBeInstanceOf(SandboxClosedError);
    expect(error.code).toBe("SBX_SANDBOX_CLOSED");
    expect(error.sandboxId).toBe(sandbox.id);
    expect(provider.drivers[0]!.processes).toHaveLength(0);
  });

  it("closed is false while alive and true after kill()", async () => {
    const sandbox = await createSandbox(createMemoryProvider());
    expect(sandbox.closed).toBe(false);
    await sandbox.kill();
    expect(sandbox.closed).toBe(true);
  });

  it("kill() twice (and concurrently) is safe and destroys the driver once", async () => {
    const provider = createMemoryProvider();
    const sandbox = await createSandbox(provider);
    await Promise.all([sandbox.kill(), sandbox.kill()]);
    await sandbox.kill();
    expect(provider.drivers[0]!.destroyCalls).toBe(1);
  });

  it("await using disposes the sandbox at the end of the scope", async () => {
    const provider = createMemoryProvider();
    let escaped: Sandbox | undefined;
    {
      await using sandbox = await createSandbox(provider);
      escaped = sandbox;
      expect(sandbox.closed).toBe(false);
    }
    expect(escaped.closed).toBe(true);
    expect(provider.drivers[0]!.destroyCalls).toBe(1);
  });

  it("kill() kills running background commands before destroying the sandbox", async () => {
    const provider = createMemoryProvider();
    const sandbox = await createSandbox(provider);
    const handle = await sandbox.commands.start("hang");
    await sandbox.kill();
    expect(provider.drivers[0]!.processes[0]!.killCalls).toBeGreaterThanOrEqual(1);
    expect((await handle.wait()).exitCode).toBe(137);
  });

  it("a driver failure in destroy() surfaces as ProviderError, and the sandbox still counts as closed", async () => {
    const sandbox = await createSandbox(createMemoryProvider({ driver: { destroyFailure: "engine went away" } }));
    const error = await caught(() => sandbox.kill());
    expect(error).toBeInstanceOf(ProviderError);
    expect(error.message).toContain("engine went away");
    expect(sandbox.closed).toBe(true);
  });
});

describe("audit record", () => {
  it("has the v1 shape: backend, ids, times, isolating, policies and environment names", async () => {
    const sandbox = await createSandbox(createMemoryProvider({ backend: "audited", driver: { notes: ["a note"] } }), {
      env: { ZETA: "1", ALPHA: "2" },
      secrets: { TOKEN: "s3cr3t-value", API_KEY: "another-secret" },
      timeoutMs: 60_000,
    });
    const record = sandbox.audit();
    expect(record).toMatchObject({
      specificationVersion: "sbx-audit-v1",
      backend: "audited",
      backendVersion: "memory 0.0.0",
      sandboxId: sandbox.id,
      target: "",
      closedAt: null,
      isolating: false,
      environment: { variables: ["ALPHA", "ZETA"], secrets: ["API_KEY", "TOKEN"] },
      notes: ["a note"],
    });
    expect(new Date(record.createdAt).toISOString()).toBe(record.createdAt);
    for (const policy of ["network", "limits", "mounts", "user", "lifetime"] as const) {
      expect(record.policies[policy]).toHaveProperty("requested");
      expect(record.policies[policy]).toHaveProperty("applied");
      expect(typeof record.policies[policy].enforcement).toBe("string");
    }
    expect(record.policies.network.requested).toEqual({ egress: "deny" });
    expect(JSON.parse(JSON.stringify(record))).toEqual(record);
    await sandbox.kill();
  });

  it("closedAt is null while alive and an ISO time after kill(), not before createdAt", async () => {
    const sandbox = await createSandbox(createMemoryProvider());
    expect(sandbox.audit().closedAt).toBeNull();
    await sandbox.kill();
    const record = sandbox.audit();
    expect(record.closedAt).not.toBeNull();
    expect(new Date(record.closedAt!).toISOString()).toBe(record.closedAt);
    expect(Date.parse(record.closedAt!)).toBeGreaterThanOrEqual(Date.parse(record.createdAt));
  });

  it("is a copy: changing it does not change the next one", async () => {
    const sandbox = await createSandbox(createMemoryProvider());
    const first = sandbox.audit() as unknown as { notes: string[] };
    first.notes.push("tampered");
    expect(sandbox.audit().notes).toEqual([]);
    await sandbox.kill();
  });

  it("holds secret names only: a secret value the driver leaked into notes or policies is redacted", async () => {
    const secret = "hunter2-very-secret";
    const sandbox = await createSandbox(createMemoryProvider({ driver: { notes: [`started with token ${secret}`] } }), {
      secrets: { TOKEN: secret },
    });
    const json = JSON.stringify(sandbox.audit());
    expect(json).not.toContain(secret);
    expect(json).toContain("TOKEN");
    expect(json).toContain("[redacted]");
    await sandbox.kill();
  });

  it("redacts a secret containing quotes and backslashes, which JSON escapes", async () => {
    const secret = 'pa"ss\\word\n42';
    const sandbox = await createSandbox(createMemoryProvider({ driver: { notes: [`token ${secret}`] } }), { secrets: { TOKEN: secret } });
    const record = sandbox.audit();
    expect(record.notes.join(" ")).not.toContain(secret);
    expect(JSON.stringify(record)).not.toContain(JSON.stringify(secret).slice(1, -1));
    await sandbox.kill();
  });
});

describe("a refused create leaves nothing behind", () => {
  it("secrets too short to redact are refused before the backend creates anything", async () => {
    for (const value of ["true", "1"]) {
      const provider = createMemoryProvider();
      const error = await caught(() => createSandbox(provider, { secrets: { TOKEN: value } }));
      expect(error.code).toBe("SBX_INVALID_ARGUMENT");
      expect(error.field).toBe("options.secrets.TOKEN");
      expect(provider.drivers.length, `sandboxes the backend created for a refused secret ${JSON.stringify(value)}`).toBe(0);
    }
  });
});
