import { isSbxError } from "@sbx/core";
import {
  AlreadyExistsError,
  ClientClosedError,
  ConflictError,
  InvalidError,
  NotFoundError,
  ResourceExhaustedError,
  SandboxFilesystemDirectoryNotEmptyError,
  SandboxFilesystemError,
  SandboxFilesystemFileTooLargeError,
  SandboxFilesystemIsADirectoryError,
  SandboxFilesystemNotADirectoryError,
  SandboxFilesystemNotFoundError,
  SandboxFilesystemPathAlreadyExistsError,
  SandboxFilesystemPermissionError,
  SandboxTimeoutError,
  TimeoutError,
} from "modal";
import { describe, expect, it } from "vitest";
import { mapModalError } from "../src/map-modal-error.js";

const context = { operation: "do something", sandboxId: "sb-123" };
const fileContext = { ...context, path: "/workspace/x" };

/** A nice-grpc ClientError as the SDK surfaces it (name, numeric code, details). */
function clientError(code: number, details = "details"): Error {
  return Object.assign(new Error(`/modal.client.ModalClient/Call ${details}`), { name: "ClientError", code, details });
}

describe("mapModalError", () => {
  const cases: Array<[string, unknown, string, typeof context | typeof fileContext, Record<string, unknown>?]> = [
    ["file not found", new SandboxFilesystemNotFoundError("missing"), "SBX_FILE_NOT_FOUND", fileContext, { path: "/workspace/x" }],
    ["is a directory", new SandboxFilesystemIsADirectoryError("dir"), "SBX_PATH", fileContext, { reason: "is-a-directory" }],
    ["directory not empty", new SandboxFilesystemDirectoryNotEmptyError("full"), "SBX_PATH", fileContext, { reason: "is-a-directory" }],
    ["not a directory", new SandboxFilesystemNotADirectoryError("file"), "SBX_PATH", fileContext, { reason: "not-a-directory" }],
    ["path already exists", new SandboxFilesystemPathAlreadyExistsError("exists"), "SBX_PATH", fileContext, { reason: "exists" }],
    ["permission denied", new SandboxFilesystemPermissionError("no"), "SBX_PROVIDER", fileContext, { retryable: false }],
    ["file too large", new SandboxFilesystemFileTooLargeError("big"), "SBX_PROVIDER", fileContext, { retryable: false }],
    ["other filesystem error", new SandboxFilesystemError("odd"), "SBX_PROVIDER", fileContext],
    [
      "sandbox unavailable during a file call (NotFoundError)",
      new NotFoundError("The Sandbox is unavailable. This Sandbox may have already shut down."),
      "SBX_SANDBOX_NOT_FOUND",
      fileContext,
      { sandboxId: "sb-123" },
    ],
    ["sandbox already finished (ConflictError)", new ConflictError("finished"), "SBX_SANDBOX_NOT_FOUND", context],
    ["sandbox timed out (SandboxTimeoutError)", new SandboxTimeoutError("timeout"), "SBX_SANDBOX_NOT_FOUND", context],
    ["client closed (detached)", new ClientClosedError(), "SBX_SANDBOX_NOT_FOUND", context],
    ["gRPC NOT_FOUND (unknown sandbox)", clientError(5), "SBX_SANDBOX_NOT_FOUND", context],
    ["gRPC FAILED_PRECONDITION (sandbox terminated)", clientError(9), "SBX_SANDBOX_NOT_FOUND", context],
    ["gRPC UNAUTHENTICATED", clientError(16), "SBX_BACKEND_UNAVAILABLE", context, { retryable: false }],
    ["gRPC PERMISSION_DENIED", clientError(7), "SBX_BACKEND_UNAVAILABLE", context, { retryable: false }],
    ["missing credentials", new Error("Profile is missing credentials"), "SBX_BACKEND_UNAVAILABLE", context],
    ["gRPC DEADLINE_EXCEEDED", clientError(4), "SBX_TIMEOUT", context, { retryable: true, killed: false }],
    ["SDK TimeoutError", new TimeoutError("slow"), "SBX_TIMEOUT", context, { killed: false }],
    ["gRPC UNAVAILABLE", clientError(14), "SBX_PROVIDER", context, { retryable: true }],
    ["ResourceExhaustedError", new ResourceExhaustedError("busy"), "SBX_PROVIDER", context, { retryable: true }],
    ["InvalidError", new InvalidError("bad"), "SBX_INVALID_ARGUMENT", context],
    ["InvalidError in a file call", new InvalidError("Remote path must be absolute"), "SBX_PATH", fileContext, { reason: "invalid" }],
    ["AlreadyExistsError", new AlreadyExistsError("name taken"), "SBX_INVALID_ARGUMENT", context],
    ["gRPC INVALID_ARGUMENT", clientError(3), "SBX_INVALID_ARGUMENT", context],
    ["gRPC CANCELLED", clientError(1), "SBX_ABORTED", context],
    ["gRPC INTERNAL", clientError(13), "SBX_PROVIDER", context],
    ["plain error", new Error("socket hang up"), "SBX_PROVIDER", context],
  ];
  for (const [title, error, code, where, fields] of cases) {
    it(`${title} → ${code}, with the SDK error as cause`, () => {
      const mapped = mapModalError(error, where);
      expect(isSbxError(mapped, code as never)).toBe(true);
      expect(mapped.cause).toBe(error);
      expect(mapped.backend).toBe("modal");
      for (const [key, value] of Object.entries(fields ?? {})) expect((mapped as unknown as Record<string, unknown>)[key]).toEqual(value);
    });
  }

  it("authentication errors say how to get a token and where to put it", () => {
    const mapped = mapModalError(clientError(16, "UNAUTHENTICATED: bad token"), context);
    expect(mapped.message).toContain("https://modal.com/settings/tokens");
    expect(mapped.message).toContain("MODAL_TOKEN_ID");
    expect(mapped.message).toContain("MODAL_TOKEN_SECRET");
  });

  it("an sbx error passes through unchanged", () => {
    const original = mapModalError(new SandboxFilesystemNotFoundError("x"), fileContext);
    expect(mapModalError(original, context)).toBe(original);
  });
});
