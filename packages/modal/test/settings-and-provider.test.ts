import { createSandbox, isSbxError } from "@sbx/core";
import { firstPartyManifests } from "@sbx/core/adapter";
import { describe, expect, it } from "vitest";
import { createSandboxProvider, modal, MODAL_CAPABILITIES } from "../src/index.js";
import { parseModalSettings } from "../src/modal-settings.js";

async function caught(work: () => Promise<unknown>): Promise<unknown> {
  try {
    await work();
  } catch (error) {
    return error;
  }
  throw new Error("expected a rejection");
}

function withoutModalEnvironment<T>(work: () => Promise<T>): Promise<T> {
  const saved = { id: process.env.MODAL_TOKEN_ID, secret: process.env.MODAL_TOKEN_SECRET };
  delete process.env.MODAL_TOKEN_ID;
  delete process.env.MODAL_TOKEN_SECRET;
  return work().finally(() => {
    if (saved.id !== undefined) process.env.MODAL_TOKEN_ID = saved.id;
    if (saved.secret !== undefined) process.env.MODAL_TOKEN_SECRET = saved.secret;
  });
}

describe("settings", () => {
  it("refuses unknown and invalid settings with InvalidArgumentError naming the field", () => {
    for (const [settings, field] of [
      [{ tokenid: "x" }, "settings.tokenid"],
      [{ serverUrl: "not a url" }, "settings.serverUrl"],
      [{ idleTimeoutMs: -1 }, "settings.idleTimeoutMs"],
      [{ logLevel: "loud" }, "settings.logLevel"],
    ] as const) {
      let error: unknown;
      try {
        createSandboxProvider(settings as Record<string, unknown>);
      } catch (thrown) {
        error = thrown;
      }
      expect(isSbxError(error, "SBX_INVALID_ARGUMENT")).toBe(true);
      expect((error as { field: string }).field).toBe(field);
    }
  });

  it("takes credentials, environment and server URL from the environment when not given; settings win", () => {
    const environment = { MODAL_TOKEN_ID: "ak-env", MODAL_TOKEN_SECRET: "as-env", MODAL_ENVIRONMENT: "dev", MODAL_SERVER_URL: "http://127.0.0.1:9" };
    expect(parseModalSettings({}, environment)).toEqual({
      tokenId: "ak-env",
      tokenSecret: "as-env",
      appName: "sbx",
      environment: "dev",
      serverUrl: "http://127.0.0.1:9",
      idleTimeoutMs: undefined,
      logLevel: undefined,
    });
    expect(parseModalSettings({ tokenId: "ak-given", appName: "agents" }, environment)).toMatchObject({
      tokenId: "ak-given",
      tokenSecret: "as-env",
      appName: "agents",
    });
    expect(parseModalSettings({}, {})).toMatchObject({ tokenId: undefined, tokenSecret: undefined, serverUrl: undefined });
  });

  it("without credentials, detect() reports it without throwing and create raises BackendUnavailableError saying how to get them and which backends need no account", async () => {
    await withoutModalEnvironment(async () => {
      const provider = modal({ serverUrl: "http://127.0.0.1:9" });
      const status = await provider.detect();
      expect(status.usable).toBe(false);
      expect(status.remedy).toContain("https://modal.com/settings/tokens");
      const error = await caught(() => createSandbox(provider));
      expect(isSbxError(error, "SBX_BACKEND_UNAVAILABLE")).toBe(true);
      expect((error as Error).message).toContain("MODAL_TOKEN_ID");
      expect((error as Error).message).toContain("docker://");
      expect((error as Error).message).toContain("fake://");
      expect((error as { alternatives: string[] }).alternatives).toEqual(["docker", "fake"]);
      expect((error as { retryable: boolean }).retryable).toBe(false);
    });
  });

  it("credentials make detect() usable without any network call, and name the server", async () => {
    const status = await createSandboxProvider({ tokenId: "ak-x", tokenSecret: "as-x", serverUrl: "http://127.0.0.1:9" }).detect();
    expect(status.usable).toBe(true);
    expect(status.reason).toContain("http://127.0.0.1:9");
    expect(process.env.MODAL_SERVER_URL).toBeUndefined();
  });
});

describe("manifest and refusals", () => {
  it("the manifest equals core's first-party copy", () => {
    expect(firstPartyManifests().find((manifest) => manifest.backend === "modal")!.capabilities).toEqual(MODAL_CAPABILITIES);
    expect(MODAL_CAPABILITIES).toMatchObject({
      EGRESS_ALLOWLIST: true,
      RESOURCE_LIMITS: true,
      RECONNECT: true,
      BACKGROUND_COMMANDS: true,
      STDIN: true,
      HOST_MOUNTS: false,
      STATEFUL_CODE: true,
      RICH_RESULTS: true,
      FILE_WATCH: true,
      PORTS: true,
    });
  });

  const offline = () => createSandboxProvider({ tokenId: "ak-x", tokenSecret: "as-x", serverUrl: "http://127.0.0.1:9" });

  it("host mounts are refused by core before the adapter is touched", async () => {
    const error = await caught(() => createSandbox(offline(), { mounts: [{ hostPath: "/tmp", sandboxPath: "/mnt/x" }] }));
    expect(isSbxError(error, "SBX_CAPABILITY_NOT_SUPPORTED")).toBe(true);
    expect((error as { capability: string }).capability).toBe("HOST_MOUNTS");
  });

  it("a pids limit is refused by the adapter before any request is sent", async () => {
    const error = await caught(() => createSandbox(offline(), { limits: { pids: 100 } }));
    expect(isSbxError(error, "SBX_CAPABILITY_NOT_SUPPORTED")).toBe(true);
    expect((error as { capability: string }).capability).toBe("RESOURCE_LIMITS");
  });

  it("an allowlist form Modal cannot enforce exactly is refused before any request is sent", async () => {
    const error = await caught(() => createSandbox(offline(), { network: { egress: "deny", allow: ["*.example.com"] } }));
    expect(isSbxError(error, "SBX_CAPABILITY_NOT_SUPPORTED")).toBe(true);
  });
});
