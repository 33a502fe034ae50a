import { isSbxError } from "@sbx/core";
import {
  AuthenticationError,
  CommandExitError,
  FileNotFoundError,
  InvalidArgumentError,
  NotFoundError,
  RateLimitError,
  SandboxError,
  SandboxNotFoundError,
  ServiceBusyError,
  TimeoutError,
} from "e2b";
import { describe, expect, it } from "vitest";
import { mapE2BError } from "../src/map-e2b-error.js";

const context = { operation: "do something", sandboxId: "sbx123" };

describe("mapE2BError", () => {
  const cases: Array<[string, unknown, string, Record<string, unknown>?]> = [
    ["sandbox not found", new SandboxNotFoundError("gone"), "SBX_SANDBOX_NOT_FOUND", { sandboxId: "sbx123" }],
    [
      "sandbox end of life (SDK TimeoutError)",
      new TimeoutError("terminated: The sandbox was killed or reached its end of life while the request was in flight."),
      "SBX_SANDBOX_NOT_FOUND",
    ],
    [
      "sandbox killed during runCode (code interpreter TimeoutError)",
      new TimeoutError(
        "The sandbox was killed while the request was in progress. This can happen when the sandbox times out or is killed manually. You can modify the sandbox timeout by passing 'timeoutMs' when starting the sandbox or calling '.setTimeout' on the sandbox with the desired timeout.",
      ),
      "SBX_SANDBOX_NOT_FOUND",
    ],
    [
      "sandbox already gone (502 from the edge)",
      new TimeoutError(
        "The sandbox was not found: This error is likely due to sandbox timeout. You can modify the sandbox timeout by passing 'timeoutMs' when starting the sandbox or calling '.setTimeout' on the sandbox with the desired timeout.",
      ),
      "SBX_SANDBOX_NOT_FOUND",
    ],
    [
      "execution timeout (code interpreter)",
      new TimeoutError("Execution timed out — the 'timeoutMs' option can be used to increase this timeout"),
      "SBX_TIMEOUT",
      { killed: false },
    ],
    [
      "request timeout",
      new TimeoutError("canceled: This error is likely due to exceeding 'requestTimeoutMs'"),
      "SBX_TIMEOUT",
      { killed: false, retryable: true },
    ],
    ["authentication", new AuthenticationError("Invalid API key"), "SBX_BACKEND_UNAVAILABLE", { retryable: false }],
    ["rate limit", new RateLimitError("slow down"), "SBX_PROVIDER", { retryable: true }],
    ["service busy", new ServiceBusyError("busy"), "SBX_PROVIDER", { retryable: true }],
    ["invalid argument", new InvalidArgumentError("bad"), "SBX_INVALID_ARGUMENT"],
    ["generic sandbox error", new SandboxError("boom"), "SBX_PROVIDER", { retryable: false }],
    ["plain error", new Error("socket hang up"), "SBX_PROVIDER"],
  ];
  for (const [title, error, code, fields] of cases) {
    it(`${title} → ${code}, with the SDK error as cause`, () => {
      const mapped = mapE2BError(error, context);
      expect(isSbxError(mapped, code as never)).toBe(true);
      expect(mapped.cause).toBe(error);
      expect(mapped.backend).toBe("e2b");
      for (const [key, value] of Object.entries(fields ?? {})) expect((mapped as unknown as Record<string, unknown>)[key]).toEqual(value);
    });
  }

  it("file not found → FileNotFoundError with the path; the deprecated NotFoundError too, for file operations", () => {
    const mapped = mapE2BError(new FileNotFoundError("no such file"), { ...context, path: "/home/user/x" });
    expect(isSbxError(mapped, "SBX_FILE_NOT_FOUND")).toBe(true);
    expect((mapped as unknown as { path: string }).path).toBe("/home/user/x");
    expect(isSbxError(mapE2BError(new NotFoundError("nope"), { ...context, path: "/home/user/y" }), "SBX_FILE_NOT_FOUND")).toBe(true);
    expect(isSbxError(mapE2BError(new NotFoundError("nope"), context), "SBX_SANDBOX_NOT_FOUND")).toBe(true);
  });

  it("authentication errors say how to get a key", () => {
    const mapped = mapE2BError(new AuthenticationError("Invalid API key"), context);
    expect(mapped.message).toContain("https://e2b.dev/dashboard");
    expect(mapped.message).toContain("E2B_API_KEY");
  });

  it("maps envd ConnectErrors by code", () => {
    const connectError = (code: number) => Object.assign(new Error("rpc"), { name: "ConnectError", code });
    expect(isSbxError(mapE2BError(connectError(14), context), "SBX_SANDBOX_NOT_FOUND")).toBe(true);
    expect(isSbxError(mapE2BError(connectError(4), context), "SBX_TIMEOUT")).toBe(true);
    expect(isSbxError(mapE2BError(connectError(16), context), "SBX_BACKEND_UNAVAILABLE")).toBe(true);
    expect(isSbxError(mapE2BError(connectError(1), context), "SBX_ABORTED")).toBe(true);
    expect(isSbxError(mapE2BError(connectError(13), context), "SBX_PROVIDER")).toBe(true);
  });

  it("a CommandExitError is never mapped by the driver's command path (exit codes are results); mapped alone it is a ProviderError", () => {
    const exit = new CommandExitError({ exitCode: 3, stdout: "", stderr: "", error: "exit status 3" });
    expect(isSbxError(mapE2BError(exit, context), "SBX_PROVIDER")).toBe(true);
  });
});
