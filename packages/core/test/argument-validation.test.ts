import { caught } from "./support/caught.ts";
import { describe, expect, it } from "vitest";
import {
  connectSandbox,
  createSandbox,
  InvalidArgumentError,
  isSbxError,
  loadProvider,
  parseTarget,
  registerProvider,
  UnsupportedSpecificationError,
  checkProvider,
} from "../src/index.ts";
import { defineCapabilities } from "../src/adapter.ts";
import { createMemoryProvider } from "./support/memory-driver.ts";

async function expectInvalidArgument(call: () => unknown, field: string): Promise<InvalidArgumentError> {
  const error = await caught(call);
  expect(error).toBeInstanceOf(InvalidArgumentError);
  expect(error.code).toBe("SBX_INVALID_ARGUMENT");
  expect(error.field).toBe(field);
  expect(error.message).toContain(field);
  return error;
}

describe("createSandbox rejects bad input before touching a backend", () => {
  const provider = createMemoryProvider();

  it.each([[""], ["docker"], ["docker:/x"], ["://x"], ["1abc://x"]])("target %j is not scheme://target → field target", async (target) => {
    const error = await expectInvalidArgument(() => createSandbox(target), "target");
    expect(error.message).toContain("scheme://target");
  });

  it.each([[42], [true], [null]])("target %j of the wrong type → field target", async (target) => {
    await expectInvalidArgument(() => createSandbox(target as never), "target");
  });

  it.each([["a string"], [42], [true], [[]], [null]])("options %j that are not a plain object → field options", async (options) => {
    await expectInvalidArgument(() => createSandbox(provider, options as never), "options");
  });

  const badOptions: Array<[string, Record<string, unknown>, string]> = [
    ["network.egress not deny/allow", { network: { egress: "open" } }, "options.network.egress"],
    ["network not an object", { network: "deny" }, "options.network"],
    ["network.allow together with egress allow", { network: { egress: "allow", allow: ["example.test"] } }, "options.network.allow"],
    ["network.allow with an empty host", { network: { egress: "deny", allow: [""] } }, "options.network.allow.0"],
    ["network.allow not an array", { network: { egress: "deny", allow: "example.test" } }, "options.network.allow"],
    ["an unknown key inside network", { network: { egress: "deny", ports: [80] } }, "options.network.ports"],
    ["negative timeoutMs", { timeoutMs: -1 }, "options.timeoutMs"],
    ["fractional timeoutMs", { timeoutMs: 1500.5 }, "options.timeoutMs"],
    ["timeoutMs as a string", { timeoutMs: "60000" }, "options.timeoutMs"],
    ["env with a name starting with a digit", { env: { "1ABC": "x" } }, "options.env.1ABC"],
    ["env with a dash in the name", { env: { "A-B": "x" } }, "options.env.A-B"],
    ["env with a non-string value", { env: { GOOD: 1 } }, "options.env.GOOD"],
    ["env that is an array", { env: ["A=1"] }, "options.env"],
    ["secrets with an invalid name", { secrets: { "BAD NAME": "x" } }, "options.secrets.BAD NAME"],
    ["secrets with a non-string value", { secrets: { TOKEN: { value: "x" } } }, "options.secrets.TOKEN"],
    ["limits.cpus zero", { limits: { cpus: 0 } }, "options.limits.cpus"],
    ["limits.memoryMiB fractional", { limits: { memoryMiB: 64.5 } }, "options.limits.memoryMiB"],
    ["limits.memoryMiB too small", { limits: { memoryMiB: 1 } }, "options.limits.memoryMiB"],
    ["limits.pids negative", { limits: { pids: -5 } }, "options.limits.pids"],
    ["an unknown limit", { limits: { disk: 10 } }, "options.limits.disk"],
    ["mounts hostPath relative", { mounts: [{ hostPath: "relative/dir", sandboxPath: "/mnt/x" }] }, "options.mounts.0.hostPath"],
    ["mounts sandboxPath with ..", { mounts: [{ hostPath: "/tmp", sandboxPath: "/mnt/../etc" }] }, "options.mounts.0.sandboxPath"],
    ["mounts sandboxPath relative", { mounts: [{ hostPath: "/tmp", sandboxPath: "mnt" }] }, "options.mounts.0.sandboxPath"],
    ["mounts readOnly not a boolean", { mounts: [{ hostPath: "/tmp", sandboxPath: "/mnt", readOnly: "yes" }] }, "options.mounts.0.readOnly"],
    ["mounts not an array", { mounts: { hostPath: "/tmp", sandboxPath: "/mnt" } }, "options.mounts"],
    ["user not default/root", { user: "admin" }, "options.user"],
    ["settings not a record", { settings: "runsc" }, "options.settings"],
    ["allowFake not a boolean", { allowFake: "yes" }, "options.allowFake"],
    ["metadata with a non-string value", { metadata: { team: 7 } }, "options.metadata.team"],
    ["signal not an AbortSignal", { signal: { aborted: false } }, "options.signal"],
    ["an unknown top-level key", { timeout: 1000 }, "options.timeout"],
  ];

  it.each(badOptions.map(([label, options, field]) => ({ label, options, field })))(
    "$label → InvalidArgumentError with field $field",
    async ({ options, field }) => {
      await expectInvalidArgument(() => createSandbox(provider, options as never), field);
      expect(provider.drivers).toHaveLength(0);
    },
  );

  it("an invalid env name is explained, not just reported as an invalid key", async () => {
    const error = await expectInvalidArgument(() => createSandbox(provider, { env: { "1ABC": "x" } }), "options.env.1ABC");
    expect(error.message).toContain("environment variable name");
  });

  it("an unknown key is named in the message", async () => {
    const error = await expectInvalidArgument(() => createSandbox(provider, { timeout: 1000 } as never), "options.timeout");
    expect(error.message).toContain("timeout");
  });

  it("an already-aborted signal → AbortedError before the provider is asked to create anything", async () => {
    const controller = new AbortController();
    controller.abort();
    const error = await caught(() => createSandbox(provider, { signal: controller.signal }));
    expect(isSbxError(error, "SBX_ABORTED")).toBe(true);
    expect(provider.drivers).toHaveLength(0);
  });

  it("valid options with every field set pass validation", async () => {
    const sandbox = await createSandbox(createMemoryProvider({ settingsSchema: { shape: { anything: {} } } }), {
      network: { egress: "deny" },
      timeoutMs: 60_000,
      env: { A_1: "x" },
      secrets: { TOKEN: "token-value" },
      metadata: { team: "core" },
      user: "root",
      allowFake: false,
      settings: { anything: true },
      signal: new AbortController().signal,
    });
    await sandbox.kill();
  });
});

describe("settings the provider does not name are refused (ADR 0029)", () => {
  it("an unknown key → field settings.<key>, the message names the known keys, and create is never called", async () => {
    const provider = createMemoryProvider({ settingsSchema: { shape: { runtime: {}, image: {} } } });
    const error = await expectInvalidArgument(() => createSandbox(provider, { settings: { runtime: "runsc", runtme: "runsc" } }), "settings.runtme");
    expect(error.message).toContain("image, runtime");
    expect(provider.drivers).toHaveLength(0);
  });

  it("a provider without a settingsSchema accepts no settings key", async () => {
    const provider = createMemoryProvider();
    const error = await expectInvalidArgument(() => createSandbox(provider, { settings: { anything: true } }), "settings.anything");
    expect(error.message).toContain("declares no settings");
    expect(provider.drivers).toHaveLength(0);
  });

  it("known keys and empty settings pass", async () => {
    const provider = createMemoryProvider({ settingsSchema: { shape: { runtime: {} } } });
    await (await createSandbox(provider, { settings: { runtime: "runsc" } })).kill();
    await (await createSandbox(createMemoryProvider(), { settings: {} })).kill();
  });

  it("connectSandbox refuses an unknown key too", async () => {
    // RECONNECT with its `connect` (ADR 0035), so what is refused is the setting.
    const provider = createMemoryProvider({ connectable: true, capabilities: defineCapabilities({ RECONNECT: true }) });
    await expectInvalidArgument(() => connectSandbox(provider, "sb-1", { settings: { anything: true } }), "settings.anything");
    expect(provider.drivers).toHaveLength(0);
  });
});

describe("connectSandbox", () => {
  const provider = createMemoryProvider({ connectable: true, capabilities: undefined });

  it.each([[""], [undefined], [42]])("sandbox id %j → field sandboxId", async (sandboxId) => {
    await expectInvalidArgument(() => connectSandbox(provider, sandboxId as never), "sandboxId");
  });

  it("bad options → field under options", async () => {
    await expectInvalidArgument(() => connectSandbox(provider, "sb-1", { user: "nobody" } as never), "options.user");
  });

  it.each([[42], [null], [undefined]])("a target of the wrong type %j → field target", async (target) => {
    await expectInvalidArgument(() => connectSandbox(target as never, "sb-1"), "target");
  });

  it("a bad target string → field target", async () => {
    await expectInvalidArgument(() => connectSandbox("not a target", "sb-1"), "target");
  });
});

describe("registerProvider", () => {
  const factory = () => createMemoryProvider({ backend: "validation-registered" });

  it.each([[""], ["1x"], ["my scheme"], ["x://"], ["a_b"]])("scheme %j → field scheme", async (scheme) => {
    await expectInvalidArgument(() => registerProvider(scheme, factory), "scheme");
  });

  it.each([[undefined], [null], [42]])("scheme of the wrong type %j → field scheme", async (scheme) => {
    await expectInvalidArgument(() => registerProvider(scheme as never, factory), "scheme");
  });

  it("a factory that is not a function → field factory", async () => {
    await expectInvalidArgument(() => registerProvider("validation-nofactory", "not a function" as never), "factory");
  });

  it("a factory whose provider speaks another specification version → UnsupportedSpecificationError, and nothing is registered", async () => {
    const error = await caught(() =>
      registerProvider("validation-oldspec", () => createMemoryProvider({ backend: "validation-oldspec", specificationVersion: "sbx-v0" })),
    );
    expect(error).toBeInstanceOf(UnsupportedSpecificationError);
    const loadError = await caught(() => loadProvider("validation-oldspec"));
    expect(loadError).toBeInstanceOf(InvalidArgumentError);
  });
});

describe("parseTarget", () => {
  it("splits scheme and target", () => {
    expect(parseTarget("docker://python:3.12-slim")).toEqual({ scheme: "docker", target: "python:3.12-slim" });
    expect(parseTarget("fake://")).toEqual({ scheme: "fake", target: "" });
    expect(parseTarget("my-adapter+v2.x://a/b://c")).toEqual({ scheme: "my-adapter+v2.x", target: "a/b://c" });
    expect(parseTarget("DOCKER://Python:3.12")).toEqual({ scheme: "docker", target: "Python:3.12" });
  });

  it.each([[""], ["auto"], ["docker"], [" docker://x"], ["docker://x "], ["docker:/x"]])("%j → InvalidArgumentError field target", async (target) => {
    await expectInvalidArgument(() => parseTarget(target), "target");
  });

  it.each([[undefined], [null], [7]])("non-string %j → InvalidArgumentError field target", async (target) => {
    await expectInvalidArgument(() => parseTarget(target as never), "target");
  });
});

describe("loadProvider and checkProvider", () => {
  it("an unknown scheme → InvalidArgumentError on target listing the known schemes and registerProvider, not retryable", async () => {
    const error = await caught(() => loadProvider("nosuchbackend"));
    expect(error).toBeInstanceOf(InvalidArgumentError);
    expect(error.code).toBe("SBX_INVALID_ARGUMENT");
    expect(error.field).toBe("target");
    expect(error.retryable).toBe(false);
    expect(error.backend).toBe("nosuchbackend");
    for (const known of ["docker://", "e2b://", "fake://"]) expect(error.message).toContain(known);
    expect(error.message).toContain('registerProvider("nosuchbackend"');
    expect(error.message).not.toContain("@sbx/nosuchbackend");
  });

  it("createSandbox of an unknown scheme → SBX_INVALID_ARGUMENT", async () => {
    const error = await caught(() => createSandbox("nosuchbackend://x"));
    expect(isSbxError(error, "SBX_INVALID_ARGUMENT")).toBe(true);
  });

  it.each([["sbx-v0"], ["sbx-v2"], [undefined]])(
    "a provider with specificationVersion %j → UnsupportedSpecificationError naming both versions",
    async (version) => {
      const provider = { ...createMemoryProvider({ backend: "validation-spec" }), specificationVersion: version };
      const error = await caught(() => createSandbox(provider as never));
      expect(error).toBeInstanceOf(UnsupportedSpecificationError);
      expect(error.code).toBe("SBX_UNSUPPORTED_SPECIFICATION");
      expect(error.message).toContain("sbx-v1");
    },
  );

  it("a registered factory returning a provider with the wrong version → UnsupportedSpecificationError from loadProvider", async () => {
    let version = "sbx-v1";
    registerProvider("validation-changing", () => createMemoryProvider({ backend: "validation-changing", specificationVersion: version }));
    version = "sbx-v9";
    const error = await caught(() => loadProvider("validation-changing"));
    expect(error).toBeInstanceOf(UnsupportedSpecificationError);
  });

  it("checkProvider refuses null and non-objects", async () => {
    expect(await caught(() => checkProvider(null as never))).toBeInstanceOf(UnsupportedSpecificationError);
    expect(await caught(() => checkProvider("docker" as never))).toBeInstanceOf(UnsupportedSpecificationError);
  });

  it("checkProvider refuses a provider whose capability manifest is malformed", async () => {
    const provider = { ...createMemoryProvider({ backend: "validation-badcaps" }), capabilities: { STDIN: "yes" } };
    const error = await caught(() => checkProvider(provider as never));
    expect(error).toBeInstanceOf(UnsupportedSpecificationError);
    expect(error.message).toContain("capabilities");
  });
});
