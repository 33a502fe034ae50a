import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createSandbox, isSbxError } from "@sbx/core";
import { compileAllowlist } from "@sbx/core/adapter";
import { describe, expect, it } from "vitest";
import { createSandboxProvider, fake } from "../src/index.js";

async function expectCode(work: Promise<unknown>, code: string): Promise<unknown> {
  try {
    await work;
  } catch (error) {
    expect(isSbxError(error) ? error.code : String(error)).toBe(code);
    return error;
  }
  throw new Error(`expected ${code}, but the call succeeded`);
}

describe("settings", () => {
  it("refuses bad settings with InvalidArgumentError naming the field", () => {
    for (const [settings, field] of [
      [{ capabilities: { RECONNECT: true } }, "settings.capabilities.RECONNECT"],
      [{ capabilities: { STATEFUL_CODE: "no" } }, "settings.capabilities.STATEFUL_CODE"],
      [{ typo: 1 }, "settings.typo"],
      [{ workspace: "relative" }, "settings.workspace"],
      [{ handlers: { commands: [{ match: /x/, respond: "not a function" }] } }, "settings.handlers.commands.0.respond"],
    ] as const) {
      try {
        createSandboxProvider(settings as never);
        expect.fail("expected InvalidArgumentError");
      } catch (error) {
        expect(isSbxError(error, "SBX_INVALID_ARGUMENT")).toBe(true);
        expect((error as { field: string }).field).toBe(field);
      }
    }
  });

  it("fake() is an alias of createSandboxProvider()", () => {
    expect(fake).toBe(createSandboxProvider);
    expect(fake().backend).toBe("fake");
  });
});

describe("narrowing", () => {
  it("turns capabilities off and behaves like a backend without them", async () => {
    const provider = createSandboxProvider({ capabilities: { STATEFUL_CODE: false, BACKGROUND_COMMANDS: false } });
    expect(provider.capabilities.STATEFUL_CODE).toBe(false);
    expect(provider.capabilities.STDIN).toBe(true);
    await using sandbox = await createSandbox(provider);
    const refused = await expectCode(sandbox.createCodeContext(), "SBX_CAPABILITY_NOT_SUPPORTED");
    expect((refused as { supportedBy: string[] }).supportedBy).not.toContain("fake");
    await expectCode(sandbox.runCode("1", { contextId: "x" }), "SBX_CAPABILITY_NOT_SUPPORTED");
    await expectCode(sandbox.commands.start("echo x"), "SBX_CAPABILITY_NOT_SUPPORTED");
  });

  it("narrows languages", async () => {
    const provider = createSandboxProvider({ capabilities: { languages: [] } });
    await using sandbox = await createSandbox(provider);
    await expectCode(sandbox.runCode("print(1)"), "SBX_CAPABILITY_NOT_SUPPORTED");
  });
});

describe("fault injection", () => {
  it("failNextCreate fails exactly one create", async () => {
    const provider = createSandboxProvider();
    provider.faults.failNextCreate();
    await expectCode(createSandbox(provider), "SBX_PROVIDER");
    await using sandbox = await createSandbox(provider);
    expect(sandbox.backend).toBe("fake");
  });

  it("failNextCreate passes a custom error through", async () => {
    const provider = createSandboxProvider();
    const custom = new Error("boom");
    provider.faults.failNextCreate(custom);
    const error = await createSandbox(provider).catch((caught: unknown) => caught);
    expect(isSbxError(error, "SBX_PROVIDER")).toBe(true);
    expect((error as Error).cause).toBe(custom);
  });

  it("timeOutNextCommand times out the next command only, without running it", async () => {
    const provider = createSandboxProvider();
    await using sandbox = await createSandbox(provider);
    provider.faults.timeOutNextCommand({ timeoutMs: 2500 });
    const error = await expectCode(sandbox.commands.run("echo ran > ran.txt"), "SBX_TIMEOUT");
    expect((error as { timeoutMs: number }).timeoutMs).toBe(2500);
    expect(await sandbox.files.exists("ran.txt")).toBe(false);
    expect((await sandbox.commands.run("echo fine")).stdout).toBe("fine\n");
  });

  it("loseSandbox makes every later call raise SandboxNotFoundError", async () => {
    const provider = createSandboxProvider();
    const sandbox = await createSandbox(provider);
    provider.faults.loseSandbox(sandbox.id);
    await expectCode(sandbox.commands.run("echo x"), "SBX_SANDBOX_NOT_FOUND");
    await expectCode(sandbox.files.write("a.txt", "x"), "SBX_SANDBOX_NOT_FOUND");
    await expectCode(sandbox.runCode("print(1)"), "SBX_SANDBOX_NOT_FOUND");
    await sandbox.kill();
  });
});

describe("handlers", () => {
  it("command handlers answer matching commands; others run for real", async () => {
    const seen: string[] = [];
    const provider = createSandboxProvider({
      handlers: {
        commands: [
          {
            match: /^git push/,
            respond: ({ command }) => {
              seen.push(command);
              return { exitCode: 0, stdout: "pushed\n" };
            },
          },
        ],
      },
    });
    await using sandbox = await createSandbox(provider);
    const pushed = await sandbox.commands.run("git push origin main");
    expect(pushed).toMatchObject({ exitCode: 0, stdout: "pushed\n" });
    expect(seen).toEqual(["git push origin main"]);
    expect((await sandbox.commands.run("echo real")).stdout).toBe("real\n");
  });

  it("command handlers see stdin", async () => {
    const provider = createSandboxProvider({
      handlers: { commands: [{ match: "upper", respond: ({ stdin }) => ({ stdout: stdin.toUpperCase() }) }] },
    });
    await using sandbox = await createSandbox(provider);
    expect((await sandbox.commands.run("upper", { stdin: "abc" })).stdout).toBe("ABC");
  });

  it("code handlers answer matching code without loading Python", async () => {
    const provider = createSandboxProvider({
      handlers: { code: [{ match: (code) => code.includes("train_model"), respond: () => ({ stdout: "accuracy 0.99\n", error: null }) }] },
    });
    await using sandbox = await createSandbox(provider);
    const execution = await sandbox.runCode("train_model()");
    expect(execution.stdout).toBe("accuracy 0.99\n");
    expect(execution.error).toBeNull();
    expect(execution.results).toBeNull();
  });
});

describe("call record", () => {
  it("records creates, commands, code and file operations with secrets redacted", async () => {
    const provider = createSandboxProvider({ handlers: { code: [{ match: /.*/, respond: () => ({}) }] } });
    await using sandbox = await createSandbox(provider, { secrets: { API_TOKEN: "hunter2-secret" }, env: { PLAIN: "visible" } });
    await sandbox.commands.run("echo $API_TOKEN hunter2-secret");
    await sandbox.files.write("notes.txt", "hello");
    await sandbox.runCode("print('hunter2-secret')");
    const calls = provider.calls;
    expect(calls.map((call) => call.kind)).toEqual(["create", "command", "file", "runCode"]);
    expect(calls[1]!.arguments.command).toBe("echo $API_TOKEN [redacted]");
    expect((calls[1]!.arguments.env as Record<string, string>).API_TOKEN).toBe("[redacted]");
    expect((calls[1]!.arguments.env as Record<string, string>).PLAIN).toBe("visible");
    expect(calls[2]).toMatchObject({ operation: "writeFile", arguments: { path: `${sandbox.workspace}/notes.txt`, bytes: 5 } });
    expect(JSON.stringify(calls)).not.toContain("hunter2-secret");
    provider.clearCalls();
    expect(provider.calls).toEqual([]);
  });

  it("redacts a secret in its base64, URL-encoded, hex and JSON-escaped forms too (core's redaction)", async () => {
    const secret = 'hunter2 "s/+?"';
    const bytes = Buffer.from(secret);
    const forms = [bytes.toString("base64"), encodeURIComponent(secret), bytes.toString("hex"), JSON.stringify(secret).slice(1, -1)];
    const provider = createSandboxProvider();
    await using sandbox = await createSandbox(provider, { secrets: { API_TOKEN: secret } });
    for (const form of forms) await sandbox.commands.run(`echo '${form.replace(/'/g, "")}'`).catch(() => {});
    const recorded = provider.calls.filter((call) => call.kind === "command").map((call) => String(call.arguments.command));
    expect(recorded).toHaveLength(forms.length);
    for (const command of recorded) expect(command).toMatch(/\[redacted\]/);
    for (const form of forms) expect(JSON.stringify(provider.calls)).not.toContain(form);
  });

  it("redacts the longest secret first, so a secret containing another is never left half-visible", async () => {
    const provider = createSandboxProvider();
    await using sandbox = await createSandbox(provider, { secrets: { SHORT: "hunter2-secret", LONG: "hunter2-secret-and-more" } });
    await sandbox.commands.run("echo hunter2-secret-and-more; echo hunter2-secret");
    const command = provider.calls.filter((call) => call.kind === "command").map((call) => String(call.arguments.command));
    expect(command).toEqual(["echo [redacted]; echo [redacted]"]);
  });
});

describe("mounts", () => {
  it("read-only mounts refuse writes from commands and the files API; read-write mounts reach the host", async () => {
    const host = await mkdtemp(join(tmpdir(), "sbx-fake-mount-"));
    try {
      await writeFile(join(host, "readme.txt"), "host text");
      await using sandbox = await createSandbox(createSandboxProvider(), {
        mounts: [
          { hostPath: host, sandboxPath: "/workspace/ro", readOnly: true },
          { hostPath: host, sandboxPath: "/mnt/rw" },
        ],
      });
      expect((await sandbox.commands.run("cat ro/readme.txt")).stdout).toBe("host text");
      expect((await sandbox.commands.run("echo x > ro/new.txt")).exitCode).not.toBe(0);
      await expectCode(sandbox.files.write("ro/new.txt", "x"), "SBX_PATH");
      expect((await sandbox.commands.run("printf written > /mnt/rw/out.txt")).exitCode).toBe(0);
      expect(await readFile(join(host, "out.txt"), "utf8")).toBe("written");
      const audit = sandbox.audit();
      expect(audit.isolating).toBe(false);
      expect(audit.policies.mounts.enforcement).toContain("read-only");
    } finally {
      await rm(host, { recursive: true, force: true });
    }
  });
});

describe("audit", () => {
  it("says plainly that the fake is not a security boundary and records user as not applicable", async () => {
    await using sandbox = await createSandbox(createSandboxProvider(), { user: "root" });
    const audit = sandbox.audit();
    expect(audit.notes.join(" ")).toContain("NOT a security boundary");
    expect(audit.policies.user.applied).toBe("not applicable");
    expect(audit.policies.network.enforcement).toContain("in-process");
  });
});

describe("shell runner", () => {
  it("carries variables, functions, cwd and set -e across top-level statements, and streams per statement", async () => {
    await using sandbox = await createSandbox(createSandboxProvider());
    const chunks: string[] = [];
    const result = await sandbox.commands.run(
      "x=5\ngreet() { echo hi-$1; }\nmkdir -p sub && cd sub\necho $x; greet you; pwd\nset -e\nfalse\necho unreachable",
      { onStdout: (text) => chunks.push(text) },
    );
    expect(result.stdout).toBe(`5\nhi-you\n${sandbox.workspace}/sub\n`);
    expect(result.exitCode).toBe(1);
    expect(chunks.length).toBeGreaterThan(0);
  });

  it("exit stops the script with its status", async () => {
    await using sandbox = await createSandbox(createSandboxProvider());
    const result = await sandbox.commands.run("echo a\nexit 7\necho b");
    expect(result).toMatchObject({ exitCode: 7, stdout: "a\n" });
  });

  it("top-level & jobs run in the background and wait waits for them", async () => {
    await using sandbox = await createSandbox(createSandboxProvider());
    const result = await sandbox.commands.run("(sleep 0.3; echo job) &\necho main\nwait\necho after");
    expect(result.stdout).toBe("main\njob\nafter\n");
  });
});

describe("network", () => {
  it("host allowlists match names, wildcards, IPs and CIDR ranges", () => {
    const allowlist = compileAllowlist(["example.com", "*.pythonhosted.org", "127.0.0.2", "10.1.0.0/16", "::1", "mirror.test:8443"], {
      backend: "fake",
    });
    const allowed = (host: string, port = 443) => allowlist.allows(host, port);
    expect(allowed("example.com")).toBe(true);
    expect(allowed("EXAMPLE.com.")).toBe(true);
    expect(allowed("www.example.com")).toBe(false);
    expect(allowed("files.pythonhosted.org")).toBe(true);
    expect(allowed("pythonhosted.org")).toBe(false);
    expect(allowed("127.0.0.2")).toBe(true);
    expect(allowed("127.0.0.1")).toBe(false);
    expect(allowed("10.1.200.3")).toBe(true);
    expect(allowed("10.2.0.1")).toBe(false);
    expect(allowed("[::1]")).toBe(true);
    expect(allowed("example.com", 8080)).toBe(true);
    expect(allowed("mirror.test", 8443)).toBe(true);
    expect(allowed("mirror.test", 443)).toBe(false);
    expect(() => compileAllowlist(["example.com", "https://example.com/path"], { backend: "fake" })).toThrow(
      expect.objectContaining({ code: "SBX_INVALID_ARGUMENT", field: "network.allow.1" }),
    );
  });
});

describe("runCode", () => {
  it("sees the same files as commands, keeps context state, and stops runaway code on timeout", async () => {
    await using sandbox = await createSandbox(createSandboxProvider());
    await sandbox.commands.run("echo from-shell > shared.txt");
    const read = await sandbox.runCode("print(open('shared.txt').read().strip())\nopen('from_python.txt', 'w').write('py')");
    expect(read.stdout).toBe("from-shell\n");
    expect((await sandbox.commands.run("cat from_python.txt")).stdout).toBe("py");
    const context = await sandbox.createCodeContext();
    await sandbox.runCode("counter = 41", { contextId: context.id });
    expect((await sandbox.runCode("print(counter + 1)", { contextId: context.id })).stdout).toBe("42\n");
    await expectCode(sandbox.runCode("while True: pass", { timeoutMs: 1000 }), "SBX_TIMEOUT");
    expect((await sandbox.runCode("print('alive')")).stdout).toBe("alive\n");
    const failed = await sandbox.runCode("raise ValueError('bad')");
    expect(failed.error).toMatchObject({ name: "ValueError", value: "bad" });
  });

  it("denies Python sockets under egress deny", async () => {
    await using sandbox = await createSandbox(createSandboxProvider());
    const execution = await sandbox.runCode("import socket\nsocket.create_connection(('127.0.0.1', 9), timeout=1)");
    expect(execution.error?.name).toBe("PermissionError");
  });
});
