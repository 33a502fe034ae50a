import { caught } from "./support/caught.ts";
import { describe, expect, it } from "vitest";
import { CapabilityNotSupportedError, connectSandbox, createSandbox, registerProvider } from "../src/index.ts";
import { backendsSupporting, defineCapabilities } from "../src/adapter.ts";
import { createMemoryProvider, MEMORY_CAPABILITIES } from "./support/memory-driver.ts";

async function expectRefusal(call: () => unknown, capability: string, backend: string): Promise<CapabilityNotSupportedError> {
  const error = await caught(call);
  expect(error).toBeInstanceOf(CapabilityNotSupportedError);
  expect(error.code).toBe("SBX_CAPABILITY_NOT_SUPPORTED");
  expect(error.capability).toBe(capability);
  expect(error.backend).toBe(backend);
  expect(error.supportedBy).not.toContain(backend);
  return error;
}

describe("policies a backend cannot enforce are refused at creation, never weakened", () => {
  it("network.allow on a backend without EGRESS_ALLOWLIST → refused, supportedBy from the registry (docker, e2b, fake), sandbox never created", async () => {
    const provider = createMemoryProvider({ backend: "no-egress" });
    const error = await expectRefusal(
      () => createSandbox(provider, { network: { egress: "deny", allow: ["example.test"] } }),
      "EGRESS_ALLOWLIST",
      "no-egress",
    );
    expect(error.supportedBy).toEqual(expect.arrayContaining(["docker", "e2b", "fake"]));
    expect(error.message).toContain("network.allow");
    expect(provider.drivers).toHaveLength(0);
  });

  it("an empty network.allow asks for nothing and is not refused", async () => {
    const sandbox = await createSandbox(createMemoryProvider({ backend: "no-egress-empty" }), { network: { egress: "deny", allow: [] } });
    await sandbox.kill();
  });

  it("registering a new manifest with the capability adds it to supportedBy", async () => {
    const before = await expectRefusal(
      () => createSandbox(createMemoryProvider({ backend: "no-egress-2" }), { network: { egress: "deny", allow: ["example.test"] } }),
      "EGRESS_ALLOWLIST",
      "no-egress-2",
    );
    expect(before.supportedBy).not.toContain("egress-capable");
    registerProvider("egress-capable", () =>
      createMemoryProvider({ backend: "egress-capable", capabilities: defineCapabilities({ EGRESS_ALLOWLIST: true }) }),
    );
    const after = await expectRefusal(
      () => createSandbox(createMemoryProvider({ backend: "no-egress-2" }), { network: { egress: "deny", allow: ["example.test"] } }),
      "EGRESS_ALLOWLIST",
      "no-egress-2",
    );
    expect(after.supportedBy).toContain("egress-capable");
    expect(backendsSupporting("EGRESS_ALLOWLIST")).toContain("egress-capable");
  });

  it("a provider that declares EGRESS_ALLOWLIST gets the allowlist passed through", async () => {
    const provider = createMemoryProvider({ backend: "egress-on", capabilities: defineCapabilities({ EGRESS_ALLOWLIST: true }) });
    const sandbox = await createSandbox(provider, { network: { egress: "deny", allow: ["example.test"] } });
    expect(sandbox.audit().policies.network.requested).toEqual({ egress: "deny", allow: ["example.test"] });
    await sandbox.kill();
  });

  it("mounts on a backend without HOST_MOUNTS → refused, supportedBy includes docker and fake", async () => {
    const provider = createMemoryProvider({ backend: "no-mounts" });
    const error = await expectRefusal(
      () => createSandbox(provider, { mounts: [{ hostPath: "/tmp", sandboxPath: "/mnt/tmp" }] }),
      "HOST_MOUNTS",
      "no-mounts",
    );
    expect(error.supportedBy).toEqual(expect.arrayContaining(["docker", "fake"]));
    expect(provider.drivers).toHaveLength(0);
  });

  it("limits on a backend without RESOURCE_LIMITS → refused, supportedBy includes docker", async () => {
    const provider = createMemoryProvider({ backend: "no-limits" });
    const error = await expectRefusal(() => createSandbox(provider, { limits: { memoryMiB: 128 } }), "RESOURCE_LIMITS", "no-limits");
    expect(error.supportedBy).toContain("docker");
    expect(provider.drivers).toHaveLength(0);
  });

  it("an empty limits object asks for nothing and is not refused", async () => {
    const sandbox = await createSandbox(createMemoryProvider({ backend: "no-limits-empty" }), { limits: {} });
    await sandbox.kill();
  });
});

describe("operations a backend cannot do are refused with CapabilityNotSupportedError", () => {
  const narrow = () => createMemoryProvider({ backend: "narrow", capabilities: defineCapabilities({ languages: ["python"] }) });

  it("commands.start without BACKGROUND_COMMANDS", async () => {
    const sandbox = await createSandbox(narrow());
    const error = await expectRefusal(() => sandbox.commands.start("hang"), "BACKGROUND_COMMANDS", "narrow");
    expect(error.supportedBy).toEqual(expect.arrayContaining(["docker", "e2b", "fake"]));
    await sandbox.kill();
  });

  it("stdin without STDIN, for run and start", async () => {
    const sandbox = await createSandbox(narrow());
    await expectRefusal(() => sandbox.commands.run("cat", { stdin: "x" }), "STDIN", "narrow");
    await sandbox.kill();
  });

  it("createCodeContext and runCode with contextId without STATEFUL_CODE; supportedBy names e2b and fake", async () => {
    const sandbox = await createSandbox(narrow());
    const error = await expectRefusal(() => sandbox.createCodeContext(), "STATEFUL_CODE", "narrow");
    expect(error.supportedBy).toEqual(expect.arrayContaining(["e2b", "fake"]));
    await expectRefusal(() => sandbox.runCode("1", { contextId: "context-1" }), "STATEFUL_CODE", "narrow");
    await sandbox.kill();
  });

  it("runCode in a language the backend does not list → capability language:<name>", async () => {
    const sandbox = await createSandbox(narrow());
    const error = await expectRefusal(() => sandbox.runCode("puts 1", { language: "ruby" }), "language:ruby", "narrow");
    expect(error.supportedBy).toEqual([]);
    await expectRefusal(() => sandbox.runCode("x", { language: "javascript" }), "language:javascript", "narrow");
    await sandbox.kill();
  });

  it("a backend with no languages refuses runCode and supportedBy lists python backends", async () => {
    const sandbox = await createSandbox(createMemoryProvider({ backend: "no-code", capabilities: defineCapabilities({}) }));
    const error = await expectRefusal(() => sandbox.runCode("print(1)"), "language:python", "no-code");
    expect(error.supportedBy).toEqual(expect.arrayContaining(["docker", "e2b", "fake"]));
    await sandbox.kill();
  });

  it("connectSandbox without RECONNECT → refused, supportedBy includes docker and e2b", async () => {
    const error = await expectRefusal(() => connectSandbox(createMemoryProvider({ backend: "no-reconnect" }), "sb-1"), "RECONNECT", "no-reconnect");
    expect(error.supportedBy).toEqual(expect.arrayContaining(["docker", "e2b"]));
  });

  it("connectSandbox with RECONNECT attaches to the id", async () => {
    const provider = createMemoryProvider({ backend: "reconnects", capabilities: defineCapabilities({ RECONNECT: true }), connectable: true });
    const sandbox = await connectSandbox(provider, "sb-42");
    expect(sandbox.id).toBe("sb-42");
    await sandbox.kill();
  });
});

describe("results are never synthesised", () => {
  it("Execution.results is null without RICH_RESULTS even when the driver returns results", async () => {
    const sandbox = await createSandbox(createMemoryProvider({ backend: "plain-code", driver: { codeChannel: true } }));
    const execution = await sandbox.runCode("42");
    expect(execution.stdout).toBe("42");
    expect(execution.results).toBeNull();
    await sandbox.kill();
  });

  it("Execution.results comes from the driver's channel with RICH_RESULTS", async () => {
    const capabilities = defineCapabilities({ ...MEMORY_CAPABILITIES, RICH_RESULTS: true, languages: ["python"] });
    const sandbox = await createSandbox(createMemoryProvider({ backend: "rich-code", capabilities, driver: { codeChannel: true } }));
    const execution = await sandbox.runCode("42");
    expect(execution.results).toEqual([{ isMainResult: true, data: { "text/plain": "42" } }]);
    await sandbox.kill();
  });

  it("an error raised by the code is a result, not a throw", async () => {
    const sandbox = await createSandbox(createMemoryProvider({ backend: "raising-code", driver: { codeChannel: true } }));
    const execution = await sandbox.runCode("raise ZeroDivisionError");
    expect(execution.error).toMatchObject({ name: "ZeroDivisionError" });
    await sandbox.kill();
  });
});
