import type { SandboxProviderV1 } from "@sbx/core";
import { defineCapabilities } from "@sbx/core/adapter";
import { describe, expect, it } from "vitest";
import { CONTRACT_TEST_IDS } from "../src/test-ids.ts";
import { createContractHarness, requiredBackends } from "../src/harness.ts";
import { defaultProbeCommand } from "../src/groups/network.ts";

const idleProvider: SandboxProviderV1 = {
  specificationVersion: "sbx-v1",
  backend: "harness-self-test",
  packageName: "none",
  capabilities: defineCapabilities({}),
  isolating: false,
  detect: async () => ({ backend: "harness-self-test", usable: false, reason: "never used", remedy: "", isolating: false }),
  create: async () => {
    throw new Error("the harness must not create sandboxes at collection time");
  },
};

describe("the contract harness itself", () => {
  it("has unique, stable test ids", () => {
    expect(new Set(CONTRACT_TEST_IDS).size).toBe(CONTRACT_TEST_IDS.length);
    for (const id of CONTRACT_TEST_IDS) expect(id).toMatch(/^[a-z-]+\.[a-z0-9-]+$/);
  });

  it("refuses skip entries without a reason or with an unknown id", () => {
    expect(() => createContractHarness("x", () => idleProvider, { skip: { "commands.abort": "" } })).toThrow(/reason/);
    expect(() => createContractHarness("x", () => idleProvider, { skip: { "commands.typo": "why" } as never })).toThrow(/unknown test id/);
  });

  it("reads the manifest from factory() without touching the backend", () => {
    const harness = createContractHarness("x", () => idleProvider, { skip: { "commands.abort": "a reason" } });
    expect(harness.capabilities).toBe(idleProvider.capabilities);
  });

  it("reads SBX_REQUIRE as a comma list", () => {
    const saved = process.env.SBX_REQUIRE;
    process.env.SBX_REQUIRE = "docker, e2b";
    try {
      expect(requiredBackends()).toEqual(["docker", "e2b"]);
    } finally {
      if (saved === undefined) delete process.env.SBX_REQUIRE;
      else process.env.SBX_REQUIRE = saved;
    }
  });

  it("quotes the URL in the default probe", () => {
    expect(defaultProbeCommand("http://127.0.0.1:1/'x")).toContain(`'http://127.0.0.1:1/'\\''x'`);
  });
});
