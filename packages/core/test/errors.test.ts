import { describe, expect, it } from "vitest";
import {
  AbortedError,
  BackendUnavailableError,
  CapabilityNotSupportedError,
  CodeInterpreterLostError,
  FileNotFoundError,
  InvalidArgumentError,
  isSbxError,
  OutOfMemoryError,
  PathError,
  PolicyNotEnforcedError,
  ProviderError,
  RuntimeMissingError,
  SandboxClosedError,
  SandboxNotFoundError,
  SbxError,
  TimeoutError,
  TooManyProcessesError,
  SandboxPausedError,
  UnsupportedSpecificationError,
} from "../src/index.ts";

describe("error classes", () => {
  const cases: Array<[string, SbxError, string, string]> = [
    [
      "CapabilityNotSupportedError",
      new CapabilityNotSupportedError({ capability: "STDIN", backend: "x", supportedBy: ["docker"] }),
      "SBX_CAPABILITY_NOT_SUPPORTED",
      "CapabilityNotSupportedError",
    ],
    [
      "BackendUnavailableError",
      new BackendUnavailableError({ backend: "x", remedy: "start it", message: "m" }),
      "SBX_BACKEND_UNAVAILABLE",
      "BackendUnavailableError",
    ],
    ["InvalidArgumentError", new InvalidArgumentError({ field: "f", message: "m" }), "SBX_INVALID_ARGUMENT", "InvalidArgumentError"],
    ["SandboxNotFoundError", new SandboxNotFoundError({ sandboxId: "s", message: "m" }), "SBX_SANDBOX_NOT_FOUND", "SandboxNotFoundError"],
    ["SandboxClosedError", new SandboxClosedError({ sandboxId: "s", operation: "run a command" }), "SBX_SANDBOX_CLOSED", "SandboxClosedError"],
    ["TimeoutError", new TimeoutError({ timeoutMs: 5, killed: true, message: "m" }), "SBX_TIMEOUT", "TimeoutError"],
    ["AbortedError", new AbortedError(), "SBX_ABORTED", "AbortError"],
    ["FileNotFoundError", new FileNotFoundError({ path: "/workspace/a" }), "SBX_FILE_NOT_FOUND", "FileNotFoundError"],
    ["PathError", new PathError({ path: "../a", reason: "escapes-workspace" }), "SBX_PATH", "PathError"],
    ["ProviderError", new ProviderError({ message: "m" }), "SBX_PROVIDER", "ProviderError"],
    [
      "PolicyNotEnforcedError",
      new PolicyNotEnforcedError({ policy: "limits.memoryMiB", message: "m" }),
      "SBX_POLICY_NOT_ENFORCED",
      "PolicyNotEnforcedError",
    ],
    ["OutOfMemoryError", new OutOfMemoryError({ memoryMiB: 64, message: "m" }), "SBX_OUT_OF_MEMORY", "OutOfMemoryError"],
    [
      "UnsupportedSpecificationError",
      new UnsupportedSpecificationError({ message: "m" }),
      "SBX_UNSUPPORTED_SPECIFICATION",
      "UnsupportedSpecificationError",
    ],
    [
      "CodeInterpreterLostError",
      new CodeInterpreterLostError({ contextId: "ctx-1", reason: "the sandbox agent exited" }),
      "SBX_INTERPRETER_LOST",
      "CodeInterpreterLostError",
    ],
    ["RuntimeMissingError", new RuntimeMissingError({ runtime: "python3" }), "SBX_RUNTIME_MISSING", "RuntimeMissingError"],
    ["TooManyProcessesError", new TooManyProcessesError({ limit: 3 }), "SBX_TOO_MANY_PROCESSES", "TooManyProcessesError"],
    ["SandboxPausedError", new SandboxPausedError({ sandboxId: "s", operation: "run a command" }), "SBX_SANDBOX_PAUSED", "SandboxPausedError"],
  ];

  it("a lost context is not retryable (its state is gone); a lost one-shot run is", () => {
    expect(new CodeInterpreterLostError({ contextId: "ctx-1", reason: "r" }).retryable).toBe(false);
    expect(new CodeInterpreterLostError({ contextId: null, reason: "r" }).retryable).toBe(true);
    expect(new RuntimeMissingError({ runtime: "python3" }).message).toContain("python3");
  });

  it("a refusal while paused is not retryable (resuming is the caller's act) and says what to call", () => {
    const error = new SandboxPausedError({ sandboxId: "s", operation: "run a command", backend: "docker" });
    expect(error.retryable).toBe(false);
    expect(error.operation).toBe("run a command");
    expect(error.message).toContain("sandbox.resume()");
  });

  it("a refusal past maxLiveProcesses is not retryable and says the bound and how to raise it", () => {
    const error = new TooManyProcessesError({ limit: 3, backend: "docker" });
    expect(error.retryable).toBe(false);
    expect(error.limit).toBe(3);
    expect(error.message).toContain("3 live commands");
    expect(error.message).toContain("maxLiveProcesses");
  });

  it.each(cases)("%s has its stable code, its name, and is an Error and an SbxError", (_label, error, code, name) => {
    expect(error.code).toBe(code);
    expect(error.name).toBe(name);
    expect(error).toBeInstanceOf(Error);
    expect(error).toBeInstanceOf(SbxError);
    expect(isSbxError(error)).toBe(true);
    expect(isSbxError(error, code as SbxError["code"])).toBe(true);
    expect(error.message.length).toBeGreaterThan(0);
  });

  it("every error code is distinct", () => {
    expect(new Set(cases.map(([, error]) => error.code)).size).toBe(cases.length);
  });

  it("isSbxError with a different code is false", () => {
    expect(isSbxError(new TimeoutError({ timeoutMs: 1, killed: false, message: "m" }), "SBX_ABORTED")).toBe(false);
  });

  it("isSbxError recognises an error from a duplicate copy of core by its Symbol.for marker, not instanceof", () => {
    const foreign = Object.assign(new Error("from another copy"), { code: "SBX_TIMEOUT", [Symbol.for("sbx.error")]: true });
    expect(foreign).not.toBeInstanceOf(SbxError);
    expect(isSbxError(foreign)).toBe(true);
    expect(isSbxError(foreign, "SBX_TIMEOUT")).toBe(true);
    expect(isSbxError(foreign, "SBX_PATH")).toBe(false);
    expect(SbxError.isInstance(foreign)).toBe(true);
  });

  it("isSbxError is false for plain errors, look-alikes without the marker, and non-objects", () => {
    expect(isSbxError(new Error("x"))).toBe(false);
    expect(isSbxError({ code: "SBX_TIMEOUT" })).toBe(false);
    expect(isSbxError({ [Symbol.for("sbx.error")]: "yes" })).toBe(false);
    expect(isSbxError(null)).toBe(false);
    expect(isSbxError(undefined)).toBe(false);
    expect(isSbxError("SBX_TIMEOUT")).toBe(false);
  });

  it("retryable defaults: false in general, true for timeouts and unavailable backends", () => {
    expect(new InvalidArgumentError({ field: "f", message: "m" }).retryable).toBe(false);
    expect(new TimeoutError({ timeoutMs: 1, killed: true, message: "m" }).retryable).toBe(true);
    expect(new BackendUnavailableError({ backend: "x", remedy: "r", message: "m" }).retryable).toBe(true);
  });

  it("toJSON is JSON-safe and carries code, name, message, backend, retryable", () => {
    const error = new ProviderError({ message: "boom", backend: "docker", cause: new Error("inner") });
    expect(JSON.parse(JSON.stringify(error))).toEqual({
      name: "ProviderError",
      code: "SBX_PROVIDER",
      message: "boom",
      backend: "docker",
      retryable: false,
    });
    expect((error as Error).cause).toBeInstanceOf(Error);
  });

  it("CapabilityNotSupportedError names the capability, the backend and the alternatives in its message", () => {
    const error = new CapabilityNotSupportedError({
      capability: "EGRESS_ALLOWLIST",
      backend: "docker",
      supportedBy: ["e2b", "fake"],
      detail: "network.allow was given",
    });
    expect(error.message).toContain("docker");
    expect(error.message).toContain("EGRESS_ALLOWLIST");
    expect(error.message).toContain("e2b, fake");
    expect(error.message).toContain("network.allow was given");
    expect(error.supportedBy).toEqual(["e2b", "fake"]);
    expect(new CapabilityNotSupportedError({ capability: "X", backend: "b", supportedBy: [] }).message).toContain("No known backend supports it");
  });

  it("CapabilityNotSupportedError copies supportedBy so later changes to the input do not leak in", () => {
    const list = ["e2b"];
    const error = new CapabilityNotSupportedError({ capability: "X", backend: "b", supportedBy: list });
    list.push("other");
    expect(error.supportedBy).toEqual(["e2b"]);
  });

  it("errors with default messages mention what they are about", () => {
    expect(new SandboxClosedError({ sandboxId: "sb-1", operation: "run a command" }).message).toMatch(/run a command.*sb-1.*closed/);
    expect(new FileNotFoundError({ path: "/workspace/missing" }).message).toContain("/workspace/missing");
    expect(new PathError({ path: "../x", reason: "escapes-workspace" }).message).toContain("escapes-workspace");
    expect(new AbortedError().message).toMatch(/aborted/);
  });

  it("TimeoutError keeps the limit, whether the work was killed, and partial output", () => {
    const error = new TimeoutError({ timeoutMs: 250, killed: true, partialStdout: "a", message: "m" });
    expect(error).toMatchObject({ timeoutMs: 250, killed: true, partialStdout: "a", partialStderr: "" });
  });
});
