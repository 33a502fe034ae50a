/**
 * Core's side of issue 7, against in-memory drivers that misbehave the way a hostile sandbox or a stalled backend
 * makes a real one misbehave: floods, throwing callbacks, kills that cannot be verified, calls that never answer,
 * huge files, secrets in other encodings, a sandbox that disappears.
 */
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it, vi } from "vitest";
import { isSbxError, SandboxNotFoundError, type Sandbox, type SandboxProviderV1 } from "../src/index.ts";
import {
  defineCapabilities,
  type CodeRequest,
  type DriverExecution,
  type ResolvedCreateOptions,
  type SpawnedProcess,
  type SpawnRequest,
  createSandboxFromDriver,
} from "../src/adapter.ts";
import { caught } from "./support/caught.ts";
import { MemoryDriver } from "./support/memory-driver.ts";

const CAPABILITIES = defineCapabilities({ STATEFUL_CODE: true, BACKGROUND_COMMANDS: true, STDIN: true, RICH_RESULTS: true, languages: ["python"] });
const GRACE_MS = 300;

function resolvedOptions(overrides: Partial<ResolvedCreateOptions> = {}): ResolvedCreateOptions {
  return {
    network: { egress: "deny" },
    timeoutMs: 60_000,
    env: {},
    secrets: {},
    metadata: {},
    mounts: [],
    user: "default",
    allowFake: false,
    settings: {},
    ...overrides,
  };
}

function providerFor(): SandboxProviderV1 {
  return {
    specificationVersion: "sbx-v1",
    backend: "memory",
    packageName: "@sbx-test/memory",
    capabilities: CAPABILITIES,
    isolating: false,
    detect: async () => ({ backend: "memory", usable: true, reason: "", remedy: "", isolating: false }),
    create: async () => {
      throw new Error("unused");
    },
  };
}

function sandboxOver(driver: MemoryDriver, overrides: Partial<ResolvedCreateOptions> = {}): Sandbox {
  return createSandboxFromDriver(driver, {
    provider: providerFor(),
    target: "",
    options: resolvedOptions(overrides),
    killGraceMs: GRACE_MS,
    destroyTimeoutMs: GRACE_MS,
  });
}

const never = <Value>() => new Promise<Value>(() => {});

/** A process whose kill and exit behave as told. */
function scriptedProcess(
  request: SpawnRequest,
  behaviour: { kill: "verify" | "reject" | "hang" | "resolve-but-no-exit"; print?: string },
): SpawnedProcess {
  let exitNow!: (value: { exitCode: number }) => void;
  const exit = new Promise<{ exitCode: number }>((resolve) => (exitNow = resolve));
  if (behaviour.print) queueMicrotask(() => request.onStdout(new TextEncoder().encode(behaviour.print)));
  return {
    pid: "1",
    exit,
    writeStdin: async () => {},
    closeStdin: async () => {},
    kill: async () => {
      if (behaviour.kill === "verify") return exitNow({ exitCode: 137 });
      if (behaviour.kill === "reject") throw new Error("the kill helper was killed; 3 processes remain");
      if (behaviour.kill === "hang") return never();
    },
  };
}

class ScriptedDriver extends MemoryDriver {
  spawnBehaviour: ((request: SpawnRequest) => Promise<SpawnedProcess>) | undefined;
  readFileBehaviour: (() => Promise<ReadableStream<Uint8Array>>) | undefined;
  destroyBehaviour: (() => Promise<void>) | undefined;
  override async spawn(request: SpawnRequest): Promise<SpawnedProcess> {
    return this.spawnBehaviour ? this.spawnBehaviour(request) : super.spawn(request);
  }
  override async readFile(path: string): Promise<ReadableStream<Uint8Array>> {
    return this.readFileBehaviour ? this.readFileBehaviour() : super.readFile(path);
  }
  override async destroy(): Promise<void> {
    return this.destroyBehaviour ? this.destroyBehaviour() : super.destroy();
  }
}

describe("runCode output is capped like commands", () => {
  it("a 64 MiB flood through the code channel keeps outputLimitBytes, counts every byte and sets truncated", async () => {
    const driver = new ScriptedDriver({ codeChannel: true });
    driver.runCode = async (request: CodeRequest): Promise<DriverExecution> => {
      const block = "x".repeat(64 * 1024);
      for (let index = 0; index < 1024; index++) request.onStdout(block);
      request.onStderr("é".repeat(10));
      return { error: null, results: null };
    };
    const sandbox = sandboxOver(driver);
    const execution = await sandbox.runCode("flood", { outputLimitBytes: 1000 });
    expect(execution.stdout).toBe("x".repeat(1000));
    expect(execution.totalBytes).toEqual({ stdout: 64 * 1024 * 1024, stderr: 20 });
    expect(execution.truncated).toEqual({ stdout: true, stderr: false, results: false });
    expect(execution.stderr).toBe("é".repeat(10));
    // Cut at a character boundary: 9 bytes hold four two-byte characters, never half of the fifth.
    const small = await sandbox.runCode("flood", { outputLimitBytes: 9 });
    expect(small.stderr).toBe("éééé");
    expect(small.truncated.stderr).toBe(true);
  });

  it("rich results are capped by count (maxResults) and by bytes (outputLimitBytes)", async () => {
    const driver = new ScriptedDriver({ codeChannel: true });
    driver.runCode = async () => ({
      error: null,
      results: Array.from({ length: 500 }, (_, index) => ({
        isMainResult: false,
        data: { "text/plain": `result-${String(index).padStart(3, "0")}` },
      })),
    });
    const sandbox = sandboxOver(driver);
    const byCount = await sandbox.runCode("many", { maxResults: 7 });
    expect(byCount.results?.length).toBe(7);
    expect(byCount.truncated.results).toBe(true);
    const byBytes = await sandbox.runCode("many", { outputLimitBytes: 100 });
    expect(byBytes.results?.length).toBe(10);
    expect(byBytes.truncated.results).toBe(true);
    const all = await sandbox.runCode("many", { maxResults: 1000 });
    expect(all.results?.length).toBe(500);
    expect(all.truncated.results).toBe(false);
  });

  it("an OOM-killed one-shot run reports outOfMemoryKilled and an OutOfMemoryError, never success", async () => {
    const driver = new ScriptedDriver();
    driver.spawnBehaviour = async (request) => {
      queueMicrotask(() => request.onStderr(new TextEncoder().encode("Killed\n")));
      return {
        pid: "1",
        exit: Promise.resolve({ exitCode: 137, outOfMemoryKilled: true }),
        writeStdin: async () => {},
        closeStdin: async () => {},
        kill: async () => {},
      };
    };
    const sandbox = sandboxOver(driver, { limits: { memoryMiB: 64 } });
    const execution = await sandbox.runCode("x = bytearray(10**10)");
    expect(execution.outOfMemoryKilled).toBe(true);
    expect(execution.error?.name).toBe("OutOfMemoryError");
    expect(execution.error?.value).toContain("limits.memoryMiB: 64");
  });

  it("a one-shot run killed by a signal without an exception reports KilledError", async () => {
    const driver = new ScriptedDriver();
    driver.spawnBehaviour = async (request) => {
      // The error channel exists (the wrapper created it empty) and holds nothing: no exception was raised.
      if (request.command.includes("sbx-error-channel-present")) {
        request.onStdout(new TextEncoder().encode("sbx-error-channel-present\n"));
        return { pid: "2", exit: Promise.resolve({ exitCode: 0 }), writeStdin: async () => {}, closeStdin: async () => {}, kill: async () => {} };
      }
      return {
        pid: "1",
        exit: Promise.resolve({ exitCode: 137, outOfMemoryKilled: false }),
        writeStdin: async () => {},
        closeStdin: async () => {},
        kill: async () => {},
      };
    };
    const execution = await sandboxOver(driver).runCode("import os; os.kill(os.getpid(), 9)");
    expect(execution.outOfMemoryKilled).toBe(false);
    expect(execution.error?.name).toBe("KilledError");
    expect(execution.error?.value).toContain("signal 9");
  });

  it("a one-shot run that failed while its error channel is missing (spawns that do not share /tmp) is a ProviderError saying why", async () => {
    const driver = new ScriptedDriver();
    driver.spawnBehaviour = async (request) => {
      // The reader runs in a spawn that sees another /tmp: the channel file is not there, so it prints nothing.
      if (request.command.includes("sbx-error-channel-present"))
        return { pid: "2", exit: Promise.resolve({ exitCode: 0 }), writeStdin: async () => {}, closeStdin: async () => {}, kill: async () => {} };
      return { pid: "1", exit: Promise.resolve({ exitCode: 1 }), writeStdin: async () => {}, closeStdin: async () => {}, kill: async () => {} };
    };
    const error = await caught(() => sandboxOver(driver).runCode("raise ValueError('lost?')"));
    expect(isSbxError(error, "SBX_PROVIDER")).toBe(true);
    expect(error.message).toContain("do not seem to share /tmp");
  });
});

describe("no callback driven by sandbox output throws into the event loop", () => {
  it("a throwing onStdout rejects commands.run with CallbackError and stops the command", async () => {
    const driver = new ScriptedDriver();
    const sandbox = sandboxOver(driver);
    const error = await caught(() =>
      sandbox.commands.run("hang flood", {
        onStdout: () => {
          throw new RangeError("Invalid string length");
        },
      }),
    );
    expect(isSbxError(error, "SBX_CALLBACK_FAILED")).toBe(true);
    expect(error.callback).toBe("onStdout");
    expect(error.cause).toBeInstanceOf(RangeError);
    expect(driver.processes[0]!.killCalls).toBe(1);
  });

  it("a throwing onStderr rejects runCode with CallbackError; later chunks are not delivered", async () => {
    const driver = new ScriptedDriver({ codeChannel: true });
    let calls = 0;
    driver.runCode = async (request) => {
      for (let index = 0; index < 5; index++) request.onStderr("chunk");
      await new Promise((resolve) => request.signal.addEventListener("abort", resolve, { once: true }));
      return { error: null, results: null };
    };
    const error = await caught(() =>
      sandboxOver(driver).runCode("x", {
        onStderr: () => {
          calls++;
          throw new Error("boom");
        },
      }),
    );
    expect(isSbxError(error, "SBX_CALLBACK_FAILED")).toBe(true);
    expect(error.callback).toBe("onStderr");
    expect(calls).toBe(1);
  });
});

describe("killed: true only when the kill was verified", () => {
  const cases = [
    ["verify", true, /killed \(verified by the backend\)/],
    ["reject", false, /could not verify.*kill helper was killed/],
    ["hang", false, /did not confirm the kill within 300 ms/],
    ["resolve-but-no-exit", false, /did not report the exit within 300 ms/],
  ] as const;
  for (const [behaviour, killed, message] of cases) {
    it(`a driver whose kill() ${behaviour === "verify" ? "resolves and the exit follows" : behaviour === "reject" ? "rejects" : behaviour === "hang" ? "never answers" : "resolves but the exit never comes"} → killed: ${killed}`, async () => {
      const driver = new ScriptedDriver();
      driver.spawnBehaviour = async (request) => scriptedProcess(request, { kill: behaviour, print: "partial\n" });
      const error = await caught(() => sandboxOver(driver).commands.run("anything", { timeoutMs: 50 }));
      expect(isSbxError(error, "SBX_TIMEOUT")).toBe(true);
      expect(error.killed).toBe(killed);
      expect(error.message).toMatch(message);
      expect(error.partialStdout).toBe("partial\n");
    });
  }

  it("handle.kill() rejects when the driver cannot verify the kill", async () => {
    const driver = new ScriptedDriver();
    driver.spawnBehaviour = async (request) => scriptedProcess(request, { kill: "hang" });
    const handle = await sandboxOver(driver).commands.start("anything");
    const error = await caught(() => handle.kill());
    expect(isSbxError(error, "SBX_TIMEOUT")).toBe(true);
    expect(error.killed).toBe(false);
  });
});

describe("deadlines start before the first backend call, and every call is bounded", () => {
  it("a spawn that never answers: commands.run({ timeoutMs }) rejects with TimeoutError (killed: false) within timeout + grace", async () => {
    const driver = new ScriptedDriver();
    let lateKill = 0;
    let release!: (process: SpawnedProcess) => void;
    driver.spawnBehaviour = (request) =>
      new Promise((resolve) => (release = (process) => resolve(process))).then((process) => process as SpawnedProcess).finally(() => void request);
    const started = Date.now();
    const error = await caught(() => sandboxOver(driver).commands.run("anything", { timeoutMs: 100 }));
    expect(isSbxError(error, "SBX_TIMEOUT")).toBe(true);
    expect(error.killed).toBe(false);
    expect(error.message).toMatch(/had not started it/);
    expect(Date.now() - started).toBeGreaterThanOrEqual(100);
    // When the backend finally starts the command, it is killed.
    release({
      pid: "late",
      exit: never(),
      writeStdin: async () => {},
      closeStdin: async () => {},
      kill: async () => {
        lateKill++;
      },
    });
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(lateKill).toBe(1);
  });

  it("a code channel that never answers and ignores the abort: runCode rejects with TimeoutError (killed: false)", async () => {
    const driver = new ScriptedDriver({ codeChannel: true });
    driver.runCode = () => never();
    const error = await caught(() => sandboxOver(driver).runCode("x", { timeoutMs: 50 }));
    expect(isSbxError(error, "SBX_TIMEOUT")).toBe(true);
    expect(error.killed).toBe(false);
  });

  it("a readFile that never answers: files.read({ timeoutMs }) rejects with TimeoutError; the default is 60 s", async () => {
    const driver = new ScriptedDriver();
    driver.readFileBehaviour = () => never();
    const error = await caught(() => sandboxOver(driver).files.read("a.txt", { timeoutMs: 50 }));
    expect(isSbxError(error, "SBX_TIMEOUT")).toBe(true);
    expect(error.timeoutMs).toBe(50);
    expect(error.killed).toBe(false);
  });

  it("a write, upload or download that stops making progress rejects with TimeoutError after 60 s without a chunk", async () => {
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] });
    try {
      const driver = new ScriptedDriver();
      driver.writeFile = () => never();
      // A download whose stream delivers one chunk and then stalls.
      driver.readFileBehaviour = async () =>
        new ReadableStream<Uint8Array>({
          start(controller) {
            controller.enqueue(new Uint8Array([1, 2, 3]));
          },
        });
      const sandbox = sandboxOver(driver);
      const writing = caught(() => sandbox.files.write("a.txt", "content"));
      const downloading = caught(() => sandbox.files.download("a.txt", join(tmpdir(), `sbx-stall-${process.pid}.bin`)));
      await vi.advanceTimersByTimeAsync(59_000);
      let settled = false;
      void writing.then(() => (settled = true));
      await vi.advanceTimersByTimeAsync(0);
      expect(settled).toBe(false);
      await vi.advanceTimersByTimeAsync(2_000);
      for (const error of [await writing, await downloading]) {
        expect(isSbxError(error, "SBX_TIMEOUT")).toBe(true);
        expect(error.killed).toBe(false);
        expect(error.message).toMatch(/made no progress .* for 60000 ms/);
      }
    } finally {
      vi.useRealTimers();
    }
  });

  it("a destroy that never answers: kill() rejects with TimeoutError, and the sandbox is closed anyway", async () => {
    const driver = new ScriptedDriver();
    driver.destroyBehaviour = () => never();
    const sandbox = sandboxOver(driver);
    const error = await caught(() => sandbox.kill());
    expect(isSbxError(error, "SBX_TIMEOUT")).toBe(true);
    expect(sandbox.closed).toBe(true);
  });
});

describe("whole-file reads refuse past maxBytes", () => {
  it("refuses with FileTooLargeError naming the size and the option; the stream form errors past its limit", async () => {
    const driver = new ScriptedDriver();
    driver.files.set("/workspace/big.bin", new Uint8Array(5000));
    const sandbox = sandboxOver(driver);
    const error = await caught(() => sandbox.files.read("big.bin", { format: "bytes", maxBytes: 4096 }));
    expect(isSbxError(error, "SBX_FILE_TOO_LARGE")).toBe(true);
    expect(error).toMatchObject({ sizeBytes: 5000, limitBytes: 4096, option: "maxBytes", path: "/workspace/big.bin" });
    expect(error.message).toContain("5000 bytes");
    expect(error.message).toContain("maxBytes");
    expect((await sandbox.files.read("big.bin", { format: "bytes", maxBytes: 5000 })).byteLength).toBe(5000);
    const stream = await sandbox.files.read("big.bin", { format: "stream", maxBytes: 10 });
    const streamError = await caught(async () => {
      for await (const _chunk of stream as unknown as AsyncIterable<Uint8Array>) void _chunk;
    });
    expect(isSbxError(streamError, "SBX_FILE_TOO_LARGE")).toBe(true);
  });

  it("rejects a maxBytes that is not a positive integer", async () => {
    const error = await caught(() => sandboxOver(new ScriptedDriver()).files.read("a", { maxBytes: -1 }));
    expect(isSbxError(error, "SBX_INVALID_ARGUMENT")).toBe(true);
    expect(error.field).toBe("options.maxBytes");
  });
});

describe("secrets are redacted in every encoding, everywhere", () => {
  const secret = 'tok "en"/+?&=é-42';
  const bytes = Buffer.from(secret);
  const forms = [
    secret,
    bytes.toString("base64").replace(/=+$/, ""),
    bytes.toString("base64url"),
    encodeURIComponent(secret),
    encodeURIComponent(secret).replace(/%20/g, "+"),
    bytes.toString("hex"),
    bytes.toString("hex").toUpperCase(),
    JSON.stringify(secret).slice(1, -1),
  ];

  it("in error messages, causes and fields such as PathError.path", async () => {
    const sandbox = sandboxOver(new ScriptedDriver(), { secrets: { TOKEN: secret } });
    for (const form of forms) {
      const error = await caught(() => sandbox.commands.run(`fail leaked ${form} here`));
      expect(error.message).not.toContain(form);
      expect(error.message).toContain("[redacted]");
      expect(String((error.cause as Error).message)).not.toContain(form);
    }
    const pathError = await caught(() => sandbox.files.read(`../${secret}`));
    expect(isSbxError(pathError, "SBX_PATH")).toBe(true);
    expect(pathError.path).not.toContain(secret);
    expect(pathError.message).not.toContain(JSON.stringify(secret).slice(1, -1));
  });

  it("in partial output of a TimeoutError", async () => {
    const sandbox = sandboxOver(new ScriptedDriver(), { secrets: { TOKEN: secret } });
    const error = await caught(() => sandbox.commands.run(`hang ${forms.join(" | ")}`, { timeoutMs: 20 }));
    for (const form of forms) expect(error.partialStdout).not.toContain(form);
    expect(error.partialStdout.split("[redacted]").length - 1).toBe(forms.length);
  });

  it("secrets shorter than 8 characters are refused at create; a secret that looks like JSON syntax cannot break audit()", async () => {
    for (const value of ["true", "1", "none", "deny", "1234567"]) {
      const error = await caught(() => sandboxOver(new ScriptedDriver(), { secrets: { SHORT: value } }));
      expect(isSbxError(error, "SBX_INVALID_ARGUMENT")).toBe(true);
      expect(error.field).toBe("options.secrets.SHORT");
    }
    const sandbox = sandboxOver(new ScriptedDriver({ notes: ['a note with "],"notes":[" in it'] }), { secrets: { JSONISH: '"],"notes":["' } });
    const audit = sandbox.audit();
    expect(audit.notes).toEqual(["a note with [redacted] in it"]);
    expect(audit.policies.network.applied).toEqual({ egress: "deny" });
  });
});

describe("a sandbox lost mid-operation gives one typed error from then on", () => {
  it("SandboxNotFoundError from the driver marks the sandbox closed; every later call raises it; kill() resolves", async () => {
    const driver = new ScriptedDriver();
    driver.spawnBehaviour = async () => {
      throw new SandboxNotFoundError({ sandboxId: driver.id, backend: "memory", message: "the container is gone" });
    };
    const sandbox = sandboxOver(driver);
    expect(isSbxError(await caught(() => sandbox.commands.run("echo hi")), "SBX_SANDBOX_NOT_FOUND")).toBe(true);
    expect(sandbox.closed).toBe(true);
    expect(sandbox.audit().closedAt).not.toBeNull();
    for (const call of [
      () => sandbox.files.read("a"),
      () => sandbox.runCode("1"),
      () => sandbox.commands.run("echo"),
      () => sandbox.files.list("."),
    ]) {
      const error = await caught(call);
      expect(isSbxError(error, "SBX_SANDBOX_NOT_FOUND")).toBe(true);
      expect(error.message).toMatch(/is gone/);
    }
    await sandbox.kill();
  });

  it("a wait that fails with SandboxNotFoundError mid-command is reported as such, not as a result", async () => {
    const driver = new ScriptedDriver();
    driver.spawnBehaviour = async () => ({
      pid: "1",
      exit: Promise.reject(new SandboxNotFoundError({ sandboxId: driver.id, backend: "memory", message: "gone mid-command" })),
      writeStdin: async () => {},
      closeStdin: async () => {},
      kill: async () => {},
    });
    const sandbox = sandboxOver(driver);
    expect(isSbxError(await caught(() => sandbox.commands.run("sleep 60")), "SBX_SANDBOX_NOT_FOUND")).toBe(true);
    expect(sandbox.closed).toBe(true);
  });
});
