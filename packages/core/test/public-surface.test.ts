/**
 * What a user meets first: targets and schemes, errors right about retrying, arguments refused by name, which
 * backends "auto" considers and in what order, and the debug logger (which never shows a secret).
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import {
  autoBackendOrder,
  BackendUnavailableError,
  createSandbox,
  InvalidArgumentError,
  registerProvider,
  type SandboxLogEntry,
} from "../src/index.ts";
import { defineCapabilities, registerBackendManifest, nativeHandleOf } from "../src/adapter.ts";
import { caught } from "./support/caught.ts";
import { createMemoryProvider } from "./support/memory-driver.ts";

const SECRET = "tok-9f8e7d6c5b4a3210";
const SECRET_BASE64 = Buffer.from(SECRET).toString("base64");

/** An in-memory provider that claims to isolate, as a third-party backend would. */
function isolatingProvider(backend: string, usable = true) {
  const provider = createMemoryProvider({
    backend,
    status: usable ? { isolating: true } : { usable: false, reason: `${backend} is not running here`, remedy: `Start ${backend}.`, isolating: true },
  });
  return { ...provider, isolating: true };
}

afterEach(() => {
  vi.unstubAllEnvs();
  vi.restoreAllMocks();
});

describe("targets and schemes", () => {
  it("an unknown scheme is InvalidArgumentError on target, not retryable, naming the known schemes and registerProvider (not an npm install)", async () => {
    const error = await caught(() => createSandbox("ftp://example"));
    expect(error).toBeInstanceOf(InvalidArgumentError);
    expect(error.field).toBe("target");
    expect(error.retryable).toBe(false);
    for (const scheme of ["docker://", "e2b://", "modal://", "fake://"]) expect(error.message).toContain(scheme);
    expect(error.message).toContain('registerProvider("ftp"');
    expect(error.message).not.toContain("npm install");
  });

  it("a known backend whose adapter package is not installed is BackendUnavailableError with the install remedy, not retryable", async () => {
    registerBackendManifest({
      backend: "notinstalled",
      packageName: "@sbx-test/not-installed",
      isolating: true,
      capabilities: defineCapabilities({ languages: [] }),
    });
    const error = await caught(() => createSandbox("notinstalled://x"));
    expect(error).toBeInstanceOf(BackendUnavailableError);
    expect(error.retryable).toBe(false);
    expect(error.remedy).toBe("Install the adapter: npm install @sbx-test/not-installed (or pnpm add @sbx-test/not-installed).");
  });

  it("schemes are case-insensitive, for targets and for registerProvider", async () => {
    registerProvider("MixedCase", () => createMemoryProvider({ backend: "mixedcase" }));
    const sandbox = await createSandbox("MIXEDcase://anything");
    expect(sandbox.backend).toBe("mixedcase");
    await sandbox.kill();
  });

  it.each([" memory://", "memory:// ", "memory://a b", "\tauto", "auto\n"])("stray whitespace in %j is refused, not trimmed", async (target) => {
    registerProvider("memory", () => createMemoryProvider());
    const error = await caught(() => createSandbox(target));
    expect(error).toBeInstanceOf(InvalidArgumentError);
    expect(error.field).toBe("target");
    expect(error.message).toContain("whitespace");
  });
});

describe("arguments refused by name", () => {
  it("files.write with a number as the path is InvalidArgumentError on path", async () => {
    const sandbox = await createSandbox(createMemoryProvider());
    const error = await caught(() => sandbox.files.write(42 as unknown as string, "x"));
    expect(error).toBeInstanceOf(InvalidArgumentError);
    expect(error.field).toBe("path");
    await sandbox.kill();
  });

  it("runCode with a contextId this sandbox never created is InvalidArgumentError on options.contextId; a created one works", async () => {
    const provider = createMemoryProvider({
      capabilities: defineCapabilities({ STATEFUL_CODE: true, languages: ["python"] }),
      driver: { codeChannel: true, codeContexts: true },
    });
    const sandbox = await createSandbox(provider);
    const error = await caught(() => sandbox.runCode("1", { contextId: "no-such-context" }));
    expect(error).toBeInstanceOf(InvalidArgumentError);
    expect(error.field).toBe("options.contextId");
    expect(error.message).toContain("createCodeContext");
    const context = await sandbox.createCodeContext();
    const execution = await sandbox.runCode("1", { contextId: context.id });
    expect(execution.error).toBeNull();
    await sandbox.kill();
  });
});

describe('"auto" and the user preference', () => {
  it("considers a registered third-party isolating backend after the first-party ones", async () => {
    for (const backend of ["docker", "apple-container", "e2b", "modal"]) registerProvider(backend, () => isolatingProvider(backend, false));
    registerProvider("bubblewrap", () => isolatingProvider("bubblewrap"));
    expect(autoBackendOrder()).toEqual(["docker", "apple-container", "e2b", "modal", "bubblewrap"]);
    const sandbox = await createSandbox("auto");
    expect(sandbox.backend).toBe("bubblewrap");
    await sandbox.kill();
  });

  it("the backends option picks the order and limits the choice", async () => {
    registerProvider("docker", () => isolatingProvider("docker"));
    registerProvider("e2b", () => isolatingProvider("e2b"));
    const sandbox = await createSandbox("auto", { backends: ["e2b", "docker"] });
    expect(sandbox.backend).toBe("e2b");
    await sandbox.kill();
    registerProvider("e2b", () => isolatingProvider("e2b", false));
    const error = await caught(() => createSandbox("auto", { backends: ["e2b"] }));
    expect(error).toBeInstanceOf(BackendUnavailableError);
    expect(error.message).toContain("preferred by the backends option (e2b)");
    expect(error.message).toContain("e2b is not running here");
  });

  it("SBX_BACKENDS states the preference (case and spaces around commas ignored); the option wins over it", async () => {
    registerProvider("docker", () => isolatingProvider("docker"));
    registerProvider("e2b", () => isolatingProvider("e2b"));
    vi.stubEnv("SBX_BACKENDS", " E2B , docker");
    expect(autoBackendOrder()).toEqual(["e2b", "docker"]);
    const fromEnvironment = await createSandbox("auto");
    expect(fromEnvironment.backend).toBe("e2b");
    await fromEnvironment.kill();
    const fromOption = await createSandbox("auto", { backends: ["docker"] });
    expect(fromOption.backend).toBe("docker");
    await fromOption.kill();
  });

  it("a name in the preference that is no backend is InvalidArgumentError naming where it came from", async () => {
    vi.stubEnv("SBX_BACKENDS", "dokcer");
    const error = await caught(() => createSandbox("auto"));
    expect(error).toBeInstanceOf(InvalidArgumentError);
    expect(error.field).toBe("SBX_BACKENDS");
    expect(error.message).toContain('"dokcer" is not a known backend');
    vi.stubEnv("SBX_BACKENDS", "docker,,e2b");
    expect((await caught(() => createSandbox("auto"))).field).toBe("SBX_BACKENDS");
    expect((await caught(() => createSandbox("auto", { backends: ["docker", "not a name"] }))).field).toBe("backends.1");
  });

  it("the fake in a preference is used only with allowFake: true", async () => {
    registerProvider("fakeish", () => createMemoryProvider({ backend: "fakeish" }));
    const refused = await caught(() => createSandbox("auto", { backends: ["fakeish"] }));
    expect(refused).toBeInstanceOf(BackendUnavailableError);
    expect(refused.message).toContain("not a security boundary");
    const sandbox = await createSandbox("auto", { backends: ["fakeish"], allowFake: true });
    expect(sandbox.backend).toBe("fakeish");
    await sandbox.kill();
  });
});

describe("the debug logger", () => {
  async function exercise(options: { logger?: (entry: SandboxLogEntry) => void }) {
    const provider = createMemoryProvider({ backend: "logged" });
    const sandbox = await createSandbox(provider, { secrets: { TOKEN: SECRET }, ...options });
    const result = await sandbox.commands.run(`echo ${SECRET} ${SECRET_BASE64}`);
    await sandbox.files.write(`notes-${SECRET}.txt`, SECRET);
    await caught(() => sandbox.files.read(`missing-${SECRET}.txt`));
    await sandbox.kill();
    return result;
  }

  it("logs each backend call (operation, duration, outcome) and never a secret, in any encoding", async () => {
    const entries: SandboxLogEntry[] = [];
    const result = await exercise({ logger: (entry) => entries.push(entry) });
    expect(result.exitCode).toBe(0);
    expect(entries.map((entry) => `${entry.operation}:${entry.outcome}`)).toEqual([
      "create:ok",
      "spawn:ok",
      "writeFile:ok",
      "readFile:error",
      "destroy:ok",
    ]);
    for (const entry of entries) {
      expect(entry.backend).toBe("logged");
      expect(entry.durationMs).toBeGreaterThanOrEqual(0);
      expect(entry.message).toContain(`${entry.operation}`);
      expect(entry.message).toContain(entry.outcome);
    }
    expect(entries[1]!.detail).toMatch(/^echo \[redacted\] \[redacted\]=?$/);
    expect(entries[3]!.errorCode).toBe("SBX_FILE_NOT_FOUND");
    const logged = JSON.stringify(entries);
    expect(logged).toContain("[redacted]");
    expect(logged).not.toContain(SECRET);
    expect(logged).not.toContain(SECRET_BASE64);
    expect(logged).not.toContain(SECRET.slice(0, 12));
  });

  it("SBX_DEBUG=1 writes the same lines to stderr, redacted; a logger that throws changes nothing", async () => {
    vi.stubEnv("SBX_DEBUG", "1");
    const lines: string[] = [];
    vi.spyOn(process.stderr, "write").mockImplementation((chunk: string | Uint8Array) => {
      lines.push(String(chunk));
      return true;
    });
    await exercise({});
    vi.restoreAllMocks();
    const debugLines = lines.filter((line) => line.startsWith("[sbx] logged"));
    expect(debugLines).toHaveLength(5);
    expect(debugLines.join("")).not.toContain(SECRET);
    const result = await exercise({
      logger: () => {
        throw new Error("logger broke");
      },
    });
    expect(result.exitCode).toBe(0);
  });
});

describe("nativeHandleOf (the adapters' escape hatch)", () => {
  it("returns the driver's native object for a sandbox of that backend, also through the debug logger", async () => {
    const native = { kind: "memory-native" };
    const provider = createMemoryProvider({ backend: "nativeful" });
    const withNative = {
      ...provider,
      create: async (request: Parameters<typeof provider.create>[0]) => Object.assign(await provider.create(request), { native }),
    };
    const sandbox = await createSandbox(withNative, { logger: () => {} });
    expect(nativeHandleOf(sandbox, "nativeful")).toBe(native);
    const wrongBackend = await caught(() => nativeHandleOf(sandbox, "docker"));
    expect(wrongBackend).toBeInstanceOf(InvalidArgumentError);
    expect(wrongBackend.field).toBe("sandbox");
    expect(wrongBackend.message).toContain("nativeful backend, not docker");
    await sandbox.kill();
  });

  it("refuses a sandbox whose driver has no native object, and an object sbx did not make", async () => {
    const sandbox = await createSandbox(createMemoryProvider({ backend: "nonative" }));
    expect((await caught(() => nativeHandleOf(sandbox, "nonative"))).message).toContain("exposes no native object");
    expect((await caught(() => nativeHandleOf({ ...sandbox }, "nonative"))).field).toBe("sandbox");
    await sandbox.kill();
  });
});
