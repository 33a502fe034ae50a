import { caught } from "./support/caught.ts";
import { describe, expect, it } from "vitest";
import { AbortedError, createSandbox, InvalidArgumentError, PathError, ProviderError, TimeoutError } from "../src/index.ts";
import { defineCapabilities } from "../src/adapter.ts";
import { createMemoryProvider, MEMORY_WORKSPACE, type MemoryDriver } from "./support/memory-driver.ts";

async function sandboxWith(
  options: Parameters<typeof createMemoryProvider>[0] = {},
  createOptions: Parameters<typeof createSandbox>[1] = {},
  /** Changes the driver before core makes the sandbox (core resolves a driver's methods once, ADR 0037). */
  prepare?: (driver: MemoryDriver) => void,
) {
  const provider = createMemoryProvider(options);
  const prepared = {
    ...provider,
    create: async (request: Parameters<typeof provider.create>[0]) => {
      const driver = (await provider.create(request)) as MemoryDriver;
      prepare?.(driver);
      return driver;
    },
  };
  const sandbox = await createSandbox(prepared, createOptions);
  return { provider, sandbox, driver: provider.drivers[0]! };
}

describe("commands.run and commands.start reject bad arguments", () => {
  const badRuns: Array<[string, unknown, unknown, string]> = [
    ["an empty command", "", undefined, "command"],
    ["a non-string command", 42, undefined, "command"],
    ["options that are not an object", "echo hi", "fast", "options"],
    ["a negative timeoutMs", "echo hi", { timeoutMs: -5 }, "options.timeoutMs"],
    ["a zero timeoutMs", "echo hi", { timeoutMs: 0 }, "options.timeoutMs"],
    ["an env name with a space", "echo hi", { env: { "A B": "x" } }, "options.env.A B"],
    ["an env value that is a number", "echo hi", { env: { A: 1 } }, "options.env.A"],
    ["stdin that is a number", "cat", { stdin: 5 }, "options.stdin"],
    ["stdin: true for run()", "cat", { stdin: true }, "options.stdin"],
    ["a zero outputLimitBytes", "echo hi", { outputLimitBytes: 0 }, "options.outputLimitBytes"],
    ["onStdout that is not a function", "echo hi", { onStdout: "console" }, "options.onStdout"],
    ["a signal that is not an AbortSignal", "echo hi", { signal: "stop" }, "options.signal"],
    ["an empty cwd", "echo hi", { cwd: "" }, "options.cwd"],
    ["an unknown option", "echo hi", { timeout: 5 }, "options.timeout"],
    ["onOutput without combinedOutput", "echo hi", { onOutput: () => {} }, "options.onOutput"],
    ["a combinedOutput that is not a boolean", "echo hi", { combinedOutput: "yes" }, "options.combinedOutput"],
  ];

  it.each(badRuns.map(([label, command, options, field]) => ({ label, command, options, field })))(
    "run with $label → InvalidArgumentError field $field, nothing spawned",
    async ({ command, options, field }) => {
      const { sandbox, driver } = await sandboxWith();
      const error = await caught(() => sandbox.commands.run(command as string, options as never));
      expect(error).toBeInstanceOf(InvalidArgumentError);
      expect(error.field).toBe(field);
      expect(driver.processes).toHaveLength(0);
      await sandbox.kill();
    },
  );

  it.each(
    badRuns.filter(([label]) => label !== "stdin: true for run()").map(([label, command, options, field]) => ({ label, command, options, field })),
  )("start with $label → InvalidArgumentError field $field", async ({ command, options, field }) => {
    const { sandbox, driver } = await sandboxWith();
    const error = await caught(() => sandbox.commands.start(command as string, options as never));
    expect(error).toBeInstanceOf(InvalidArgumentError);
    expect(error.field).toBe(field);
    expect(driver.processes).toHaveLength(0);
    await sandbox.kill();
  });

  it("a cwd with a NUL byte → PathError", async () => {
    const { sandbox } = await sandboxWith();
    const error = await caught(() => sandbox.commands.run("pwd", { cwd: "a\0b" }));
    expect(error).toBeInstanceOf(PathError);
    expect(error.reason).toBe("invalid");
    await sandbox.kill();
  });

  it("writeStdin on a handle started without stdin: true → InvalidArgumentError options.stdin", async () => {
    const { sandbox } = await sandboxWith();
    const handle = await sandbox.commands.start("hang");
    const error = await caught(() => handle.writeStdin("x"));
    expect(error).toBeInstanceOf(InvalidArgumentError);
    expect(error.field).toBe("options.stdin");
    await handle.kill();
    await sandbox.kill();
  });

  it("writeStdin after closeStdin → InvalidArgumentError", async () => {
    const { sandbox } = await sandboxWith();
    const handle = await sandbox.commands.start("cat", { stdin: true });
    await handle.writeStdin("abc");
    await handle.closeStdin();
    await handle.closeStdin();
    expect((await handle.wait()).stdout).toBe("abc");
    expect(await caught(() => handle.writeStdin("late"))).toBeInstanceOf(InvalidArgumentError);
    await sandbox.kill();
  });
});

describe("commands.run results", () => {
  it("returns stdout, exit code, bytes and totals; a non-zero exit code is a result, not an error", async () => {
    const { sandbox } = await sandboxWith();
    const result = await sandbox.commands.run("echo héllo");
    expect(result).toMatchObject({
      exitCode: 0,
      stdout: "héllo\n",
      stderr: "",
      truncated: { stdout: false, stderr: false },
      totalBytes: { stdout: 7, stderr: 0 },
      outOfMemoryKilled: null,
    });
    expect(new TextDecoder().decode(result.stdoutBytes)).toBe("héllo\n");
    const failed = await sandbox.commands.run("exit 3");
    expect(failed.exitCode).toBe(3);
    await sandbox.kill();
  });

  it("runs in the workspace by default, relative cwd is taken from the workspace, absolute cwd is kept", async () => {
    const { sandbox } = await sandboxWith();
    expect((await sandbox.commands.run("pwd")).stdout).toBe(MEMORY_WORKSPACE);
    expect((await sandbox.commands.run("pwd", { cwd: "sub/dir" })).stdout).toBe(`${MEMORY_WORKSPACE}/sub/dir`);
    expect((await sandbox.commands.run("pwd", { cwd: "/tmp" })).stdout).toBe("/tmp");
    await sandbox.kill();
  });

  it("the environment merges sandbox env, secrets and per-command env (command wins)", async () => {
    const { sandbox, driver } = await sandboxWith({}, { env: { A: "env", B: "env" }, secrets: { S: "secret-value" } });
    await sandbox.commands.run("env A", { env: { B: "command" } });
    expect(driver.processes[0]!.request.env).toMatchObject({ A: "env", B: "command", S: "secret-value" });
    await sandbox.kill();
  });

  it("stdin text is written and closed", async () => {
    const { sandbox } = await sandboxWith();
    expect((await sandbox.commands.run("cat", { stdin: "from stdin" })).stdout).toBe("from stdin");
    expect((await sandbox.commands.run("cat", { stdin: new Uint8Array([104, 105]) })).stdout).toBe("hi");
    await sandbox.kill();
  });

  it("streams decoded text to onStdout, keeping a multi-byte character split across chunks whole", async () => {
    const { sandbox } = await sandboxWith();
    const seen: string[] = [];
    // "é" is c3 a9 and "€" is e2 82 ac, each split across chunks.
    const result = await sandbox.commands.run("chunks 61c3 a962e2 82 ac", { onStdout: (text) => seen.push(text) });
    expect(seen.join("")).toBe("aéb€");
    expect(seen.join("")).not.toContain("\uFFFD");
    expect(result.stdout).toBe("aéb€");
    await sandbox.kill();
  });

  it("output beyond outputLimitBytes is dropped but counted, and truncated is set", async () => {
    const { sandbox } = await sandboxWith();
    const result = await sandbox.commands.run("repeat 10 x", { outputLimitBytes: 4 });
    expect(result.stdout).toBe("xxxx");
    expect(result.stdoutBytes.byteLength).toBe(4);
    expect(result.truncated.stdout).toBe(true);
    expect(result.totalBytes.stdout).toBe(10);
    const exact = await sandbox.commands.run("repeat 4 x", { outputLimitBytes: 4 });
    expect(exact.truncated.stdout).toBe(false);
    await sandbox.kill();
  });
});

describe("timeouts and abort kill the command", () => {
  it("a command that never exits + timeoutMs → TimeoutError with killed: true, partial output, and the driver's kill called", async () => {
    const { sandbox, driver } = await sandboxWith();
    const error = await caught(() => sandbox.commands.run("hang", { timeoutMs: 50 }));
    expect(error).toBeInstanceOf(TimeoutError);
    expect(error.code).toBe("SBX_TIMEOUT");
    expect(error.killed).toBe(true);
    expect(error.timeoutMs).toBe(50);
    expect(error.partialStdout).toBe("started\n");
    expect(driver.processes[0]!.killCalls).toBe(1);
    await sandbox.kill();
  });

  it("a background command past its timeout: wait() rejects with TimeoutError and the process was killed", async () => {
    const { sandbox, driver } = await sandboxWith();
    const handle = await sandbox.commands.start("hang", { timeoutMs: 50 });
    const error = await caught(() => handle.wait());
    expect(error).toBeInstanceOf(TimeoutError);
    expect(driver.processes[0]!.killCalls).toBe(1);
    await sandbox.kill();
  });

  it("a command that never reads its stdin + timeoutMs → TimeoutError, not a hang in the stdin write", async () => {
    const { sandbox, driver } = await sandboxWith();
    const error = await caught(() => sandbox.commands.run("block-stdin", { stdin: "input nobody reads", timeoutMs: 50 }));
    expect(error).toBeInstanceOf(TimeoutError);
    expect(driver.processes[0]!.killCalls).toBe(1);
    await sandbox.kill();
  });

  it("a failed stdin write kills the process and surfaces as ProviderError", async () => {
    const { sandbox, driver } = await sandboxWith({}, {}, (driver) => {
      const spawn = driver.spawn.bind(driver);
      driver.spawn = async (request) => ({
        ...(await spawn(request)),
        writeStdin: async () => {
          throw new Error("pipe closed");
        },
      });
    });
    const error = await caught(() => sandbox.commands.run("cat", { stdin: "x" }));
    expect(error).toBeInstanceOf(ProviderError);
    expect(error.message).toContain("pipe closed");
    expect(driver.processes[0]!.killCalls).toBe(1);
    await sandbox.kill();
  });

  it("an already-aborted signal → AbortedError and nothing is spawned", async () => {
    const { sandbox, driver } = await sandboxWith();
    const controller = new AbortController();
    controller.abort();
    const error = await caught(() => sandbox.commands.run("echo hi", { signal: controller.signal }));
    expect(error).toBeInstanceOf(AbortedError);
    expect(error.code).toBe("SBX_ABORTED");
    expect(driver.processes).toHaveLength(0);
    await sandbox.kill();
  });

  it("aborting a running command kills it and rejects with AbortedError", async () => {
    const { sandbox, driver } = await sandboxWith();
    const controller = new AbortController();
    const running = sandbox.commands.run("hang", { signal: controller.signal, onStdout: () => controller.abort() });
    const error = await caught(() => running);
    expect(error).toBeInstanceOf(AbortedError);
    expect(driver.processes[0]!.killCalls).toBe(1);
    await sandbox.kill();
  });

  it("aborting while the backend is still starting the process kills it once started", async () => {
    const controller = new AbortController();
    const { sandbox, driver } = await sandboxWith({}, {}, (driver) => {
      const spawn = driver.spawn.bind(driver);
      driver.spawn = async (request) => {
        const process = await spawn(request);
        controller.abort();
        return process;
      };
    });
    const error = await caught(() => sandbox.commands.run("hang", { signal: controller.signal }));
    expect(error).toBeInstanceOf(AbortedError);
    expect(driver.processes[0]!.killCalls).toBe(1);
    await sandbox.kill();
  });

  it("handle.kill() twice is safe and wait() then gives the kill's exit code", async () => {
    const { sandbox } = await sandboxWith();
    const handle = await sandbox.commands.start("hang");
    await handle.kill();
    await handle.kill();
    expect((await handle.wait()).exitCode).toBe(137);
    await sandbox.kill();
  });

  it("an unread background stdout keeps at most outputLimitBytes", async () => {
    const { sandbox } = await sandboxWith();
    const handle = await sandbox.commands.start("repeat 100 x", { outputLimitBytes: 8 });
    await handle.wait();
    let text = "";
    for await (const chunk of handle.stdout) text += chunk;
    expect(text).toBe("x".repeat(8));
    await sandbox.kill();
  });

  it("handle.stdout yields output as it arrives and ends when the command exits", async () => {
    const { sandbox } = await sandboxWith();
    const handle = await sandbox.commands.start("echo streamed");
    const chunks: string[] = [];
    for await (const text of handle.stdout) chunks.push(text);
    expect(chunks.join("")).toBe("streamed\n");
    await sandbox.kill();
  });
});

describe("secrets never appear in errors", () => {
  it("a driver error whose message contains a secret → ProviderError whose message (and cause) do not", async () => {
    const secret = "tok-1234567890";
    const { sandbox } = await sandboxWith({}, { secrets: { TOKEN: secret } });
    const error = await caught(() => sandbox.commands.run(`fail could not auth with ${secret}`));
    expect(error).toBeInstanceOf(ProviderError);
    expect(error.code).toBe("SBX_PROVIDER");
    expect(error.message).not.toContain(secret);
    expect(error.message).toContain("[redacted]");
    expect(String(error.stack)).not.toContain(secret);
    expect((error.cause as Error).message).not.toContain(secret);
    await sandbox.kill();
  });

  it("a secret that contains another secret is redacted whole", async () => {
    const { sandbox } = await sandboxWith({}, { secrets: { SHORT: "abc123-xy", LONG: "abc123-xy-and-more" } });
    const error = await caught(() => sandbox.commands.run("fail leaked abc123-xy-and-more here"));
    expect(error.message).not.toContain("and-more");
    expect(error.message).not.toContain("abc123");
    await sandbox.kill();
  });

  it("a provider create() failure mentioning a secret → ProviderError without it", async () => {
    const secret = "create-secret-value";
    const error = await caught(() => createSandbox(createMemoryProvider({ createFailure: `bad key ${secret}` }), { secrets: { KEY: secret } }));
    expect(error).toBeInstanceOf(ProviderError);
    expect(error.message).not.toContain(secret);
  });

  it("partial output in a TimeoutError is redacted", async () => {
    const { sandbox } = await sandboxWith({}, { secrets: { STARTED: "started-secret" } });
    const error = await caught(() => sandbox.commands.run("hang started-secret", { timeoutMs: 20 }));
    expect(error).toBeInstanceOf(TimeoutError);
    expect(error.partialStdout).toBe("[redacted]\n");
    await sandbox.kill();
  });
});

describe("runCode and createCodeContext", () => {
  const stateful = defineCapabilities({ STATEFUL_CODE: true, BACKGROUND_COMMANDS: true, STDIN: true, languages: ["python"] });

  const badCode: Array<[string, unknown, unknown, string]> = [
    ["a non-string code", 42, undefined, "code"],
    ["null code", null, undefined, "code"],
    ["options that are not an object", "1", 7, "options"],
    ["an empty language", "1", { language: "" }, "options.language"],
    ["an empty contextId", "1", { contextId: "" }, "options.contextId"],
    ["a negative timeoutMs", "1", { timeoutMs: -1 }, "options.timeoutMs"],
    ["onStderr that is not a function", "1", { onStderr: 1 }, "options.onStderr"],
    ["an unknown option", "1", { cwd: "/tmp" }, "options.cwd"],
  ];

  it.each(badCode.map(([label, code, options, field]) => ({ label, code, options, field })))(
    "runCode with $label → InvalidArgumentError field $field",
    async ({ code, options, field }) => {
      const { sandbox, driver } = await sandboxWith({ capabilities: stateful, driver: { codeChannel: true, codeContexts: true } });
      const error = await caught(() => sandbox.runCode(code as string, options as never));
      expect(error).toBeInstanceOf(InvalidArgumentError);
      expect(error.field).toBe(field);
      expect(driver.codeRequests).toHaveLength(0);
      await sandbox.kill();
    },
  );

  it("empty code is allowed", async () => {
    const { sandbox } = await sandboxWith({ driver: { codeChannel: true } });
    expect((await sandbox.runCode("")).error).toBeNull();
    await sandbox.kill();
  });

  it.each([[5], [""]])("createCodeContext with language %j → InvalidArgumentError options.language", async (language) => {
    const { sandbox } = await sandboxWith({ capabilities: stateful, driver: { codeChannel: true, codeContexts: true } });
    const error = await caught(() => sandbox.createCodeContext({ language: language as never }));
    expect(error).toBeInstanceOf(InvalidArgumentError);
    expect(error.field).toBe("options.language");
    await sandbox.kill();
  });

  it("createCodeContext returns the driver's context, and runCode passes its id through", async () => {
    const { sandbox, driver } = await sandboxWith({ capabilities: stateful, driver: { codeChannel: true, codeContexts: true } });
    const context = await sandbox.createCodeContext();
    expect(context).toEqual({ id: "context-1", language: "python" });
    await sandbox.runCode("x = 1", { contextId: context.id });
    expect(driver.codeRequests[0]!.contextId).toBe("context-1");
    await sandbox.kill();
  });

  it("code that never finishes + timeoutMs → TimeoutError killed: true, and the driver's signal was aborted", async () => {
    const { sandbox, driver } = await sandboxWith({ driver: { codeChannel: true } });
    const error = await caught(() => sandbox.runCode("hang", { timeoutMs: 30 }));
    expect(error).toBeInstanceOf(TimeoutError);
    expect(error.killed).toBe(true);
    expect(error.timeoutMs).toBe(30);
    expect(driver.codeRequests[0]!.signal.aborted).toBe(true);
    await sandbox.kill();
  });

  it("aborting running code → AbortedError", async () => {
    const { sandbox } = await sandboxWith({ driver: { codeChannel: true } });
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 10);
    expect(await caught(() => sandbox.runCode("hang", { signal: controller.signal }))).toBeInstanceOf(AbortedError);
    await sandbox.kill();
  });
});

describe("combinedOutput and commands.defaultTimeoutMs (ADR 0045)", () => {
  it("combinedOutput hands the driver the command after `exec 2>&1` on a line of its own, and output is the merged pipe", async () => {
    const { sandbox, driver } = await sandboxWith();
    const streamed: string[] = [];
    const result = await sandbox.commands.run("# a first-line comment stays a comment\necho hi", {
      combinedOutput: true,
      onOutput: (text) => streamed.push(text),
    });
    expect(driver.processes[0]!.request.command).toBe("exec 2>&1\n# a first-line comment stays a comment\necho hi");
    expect(result.exitCode).toBe(127);
    // The memory driver does not run a shell: what it wrote to stderr comes first in output, then stdout (empty here).
    expect(result.output).toBe(result.stderr + result.stdout);
    expect(streamed.join("")).toBe(result.output);
    const separate = await sandbox.commands.run("echo hi");
    expect(driver.processes[1]!.request.command).toBe("echo hi");
    expect(separate.output).toBeUndefined();
    await sandbox.kill();
  });

  it("defaultTimeoutMs at create times out a command given none (TimeoutError naming the default, killed), and a command's own wins", async () => {
    const { sandbox, driver } = await sandboxWith({}, { commands: { defaultTimeoutMs: 50 } });
    const error = await caught(() => sandbox.commands.run("hang"));
    expect(error).toBeInstanceOf(TimeoutError);
    expect(error.timeoutMs).toBe(50);
    expect(error.killed).toBe(true);
    expect(driver.processes[0]!.killCalls).toBe(1);
    const handle = await sandbox.commands.start("hang");
    expect(await caught(() => handle.wait())).toBeInstanceOf(TimeoutError);
    const own = await sandbox.commands.run("echo own", { timeoutMs: 60_000 });
    expect(own.stdout).toBe("own\n");
    await sandbox.kill();
  });

  it("an invalid defaultTimeoutMs is refused at create", async () => {
    const error = await caught(() => sandboxWith({}, { commands: { defaultTimeoutMs: 0 } }));
    expect(error).toBeInstanceOf(InvalidArgumentError);
    const unknown = await caught(() => sandboxWith({}, { commands: { timeoutMs: 5 } as never }));
    expect(unknown).toBeInstanceOf(InvalidArgumentError);
  });
});
