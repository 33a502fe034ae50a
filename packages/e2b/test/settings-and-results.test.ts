import { createSandbox, isSbxError } from "@sbx/core";
import { describe, expect, it } from "vitest";
import { createSandboxProvider, e2b, E2B_CAPABILITIES } from "../src/index.js";
import { exitCodeOfEnd, startHeaders } from "../src/envd-process-stream.js";
import { mapE2BResult } from "../src/map-e2b-result.js";
import { parseE2BSettings } from "../src/e2b-settings.js";
import { firstPartyManifests } from "@sbx/core/adapter";

describe("settings", () => {
  it("refuses unknown and invalid settings with InvalidArgumentError naming the field", () => {
    for (const [settings, field] of [
      [{ apikey: "x" }, "settings.apikey"],
      [{ apiUrl: "not a url" }, "settings.apiUrl"],
      [{ requestTimeoutMs: -1 }, "settings.requestTimeoutMs"],
    ] as const) {
      let caught: unknown;
      try {
        createSandboxProvider(settings as Record<string, unknown>);
      } catch (error) {
        caught = error;
      }
      expect(isSbxError(caught, "SBX_INVALID_ARGUMENT")).toBe(true);
      expect((caught as { field: string }).field).toBe(field);
    }
  });

  it("takes the key from E2B_API_KEY when not given", () => {
    expect(parseE2BSettings({}, { E2B_API_KEY: "e2b_abc" }).apiKey).toBe("e2b_abc");
    expect(parseE2BSettings({ apiKey: "e2b_given" }, { E2B_API_KEY: "e2b_abc" }).apiKey).toBe("e2b_given");
    expect(parseE2BSettings({}, {}).apiKey).toBeUndefined();
  });

  it("without a key, detect() reports it without throwing and create raises BackendUnavailableError with the remedy", async () => {
    const saved = process.env.E2B_API_KEY;
    delete process.env.E2B_API_KEY;
    try {
      const provider = e2b();
      const status = await provider.detect();
      expect(status.usable).toBe(false);
      expect(status.remedy).toContain("https://e2b.dev/dashboard");
      let caught: unknown;
      try {
        await createSandbox(provider);
      } catch (error) {
        caught = error;
      }
      expect(isSbxError(caught, "SBX_BACKEND_UNAVAILABLE")).toBe(true);
      expect((caught as Error).message).toContain("E2B_API_KEY");
      expect((caught as Error).message).toContain("docker://");
      expect((caught as { alternatives: string[] }).alternatives).toEqual(["docker", "fake"]);
    } finally {
      if (saved !== undefined) process.env.E2B_API_KEY = saved;
    }
  });

  it("a key makes detect() usable without any network call", async () => {
    const status = await createSandboxProvider({ apiKey: "e2b_0000", apiUrl: "http://127.0.0.1:9" }).detect();
    expect(status.usable).toBe(true);
    expect(status.reason).toContain("http://127.0.0.1:9");
  });

  it("the manifest equals core's first-party copy", () => {
    expect(firstPartyManifests().find((manifest) => manifest.backend === "e2b")!.capabilities).toEqual(E2B_CAPABILITIES);
  });

  it("limits are refused by core before the adapter is touched", async () => {
    let caught: unknown;
    try {
      await createSandbox(createSandboxProvider({ apiKey: "e2b_0000", apiUrl: "http://127.0.0.1:9", sandboxUrl: "http://127.0.0.1:9" }), {
        limits: { memoryMiB: 256 },
      });
    } catch (error) {
      caught = error;
    }
    expect(isSbxError(caught, "SBX_CAPABILITY_NOT_SUPPORTED")).toBe(true);
    expect((caught as { capability: string }).capability).toBe("RESOURCE_LIMITS");
  });
});

describe("results", () => {
  it("maps E2B result fields to MIME types, binary as base64, json stringified", () => {
    const mapped = mapE2BResult({
      isMainResult: true,
      text: "42",
      html: "<b>42</b>",
      png: "iVBOR",
      json: { a: 1 },
      markdown: "**x**",
      extra: { "application/geo+json": "{}" },
    });
    expect(mapped).toEqual({
      isMainResult: true,
      data: {
        "text/plain": "42",
        "text/html": "<b>42</b>",
        "image/png": "iVBOR",
        "application/json": '{"a":1}',
        "text/markdown": "**x**",
        "application/geo+json": "{}",
      },
    });
    expect(mapE2BResult({ isMainResult: false, svg: "<svg/>" })).toEqual({ isMainResult: false, data: { "image/svg+xml": "<svg/>" } });
  });
});

describe("envd process stream", () => {
  it("turns envd's end event into an exit code, 128 + signal for signal deaths", () => {
    expect(exitCodeOfEnd({ exitCode: 3, exited: true, status: "exit status 3" })).toBe(3);
    expect(exitCodeOfEnd({ exitCode: -1, exited: false, status: "signal: killed" })).toBe(137);
    expect(exitCodeOfEnd({ exitCode: -1, exited: false, status: "signal: terminated" })).toBe(143);
    expect(exitCodeOfEnd({ exitCode: -1, exited: false, status: "" })).toBe(137);
  });

  it("sends Basic auth only for an explicit user or an old envd, as the SDK does", () => {
    expect(startHeaders("0.6.13", undefined)).toEqual({ "Keepalive-Ping-Interval": "50" });
    expect(startHeaders("0.6.13", "root").Authorization).toBe(`Basic ${Buffer.from("root:").toString("base64")}`);
    expect(startHeaders("0.3.9", undefined).Authorization).toBe(`Basic ${Buffer.from("user:").toString("base64")}`);
  });
});
