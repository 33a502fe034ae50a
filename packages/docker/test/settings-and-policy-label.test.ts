import { isSbxError } from "@sbx/core";
import { describe, expect, it } from "vitest";
import { parseDockerSettings, refineDockerSettings } from "../src/docker-settings.js";
import { policyLabelValue, readPolicyLabel, type PolicyLabel } from "../src/policy-label.js";

describe("Docker settings are parsed once (issue 20)", () => {
  const given = { image: "sbx-test/python:3.11", defaultLimits: { cpus: 2 } };
  const resolved = parseDockerSettings(given);

  it("the same settings core passes again to create are not parsed again: the provider's resolved object is used as is", () => {
    expect(refineDockerSettings({ given, resolved }, { ...given })).toBe(resolved);
    expect(refineDockerSettings({ given, resolved }, {})).toBe(resolved);
  });

  it("a per-sandbox value that differs is parsed (with its defaults) over the provider's", () => {
    const refined = refineDockerSettings({ given, resolved }, { ...given, defaultLimits: { memoryMiB: 1024 }, tmpSizeMiB: 32 });
    expect(refined.defaultLimits).toEqual({ cpus: 1, memoryMiB: 1024, pids: 256 });
    expect(refined.tmpSizeMiB).toBe(32);
    expect(refined.image).toBe("sbx-test/python:3.11");
    expect(refined).toEqual(parseDockerSettings({ ...given, defaultLimits: { memoryMiB: 1024 }, tmpSizeMiB: 32 }));
  });

  it("an invalid or unknown per-sandbox value is InvalidArgumentError naming the field", () => {
    for (const [overrides, field] of [
      [{ tmpSizeMiB: 0 }, "settings.tmpSizeMiB"],
      [{ defaultLimits: { pids: 1 } }, "settings.defaultLimits.pids"],
      [{ noSuchSetting: true }, "settings.noSuchSetting"],
    ] as const) {
      let thrown: unknown;
      try {
        refineDockerSettings({ given, resolved }, overrides);
      } catch (error) {
        thrown = error;
      }
      expect(isSbxError(thrown, "SBX_INVALID_ARGUMENT"), JSON.stringify(overrides)).toBe(true);
      expect(thrown).toMatchObject({ field });
    }
  });
});

describe("the policy label: one schema for writing and reading back (issue 20)", () => {
  const label: PolicyLabel = {
    egress: "deny",
    cpus: 1.5,
    memoryMiB: 512,
    pids: 256,
    user: "default",
    commandUser: "10001:10001",
    lifetimeSeconds: 300,
    runtime: null,
    workspaceSizeMiB: 224,
    tmpSizeMiB: 64,
    endsWithHost: true,
  };

  it("what is written reads back equal; a label lacking fields (an older sbx) reads back partial", () => {
    expect(readPolicyLabel(policyLabelValue(label))).toEqual(label);
    expect(readPolicyLabel(JSON.stringify({ egress: "allow", cpus: 2 }))).toEqual({ egress: "allow", cpus: 2 });
    expect(readPolicyLabel(undefined)).toEqual({});
  });

  it("a label sbx did not write (not JSON, or a field of the wrong type) is refused, never read as defaults", () => {
    for (const text of ["{not json", JSON.stringify({ cpus: "all" }), JSON.stringify({ egress: "everything" })]) {
      let thrown: unknown;
      try {
        readPolicyLabel(text);
      } catch (error) {
        thrown = error;
      }
      expect(isSbxError(thrown, "SBX_PROVIDER"), text).toBe(true);
      expect((thrown as Error).message).toContain("policy label");
    }
  });

  it("writing refuses a label that does not fit the schema", () => {
    expect(() => policyLabelValue({ ...label, memoryMiB: "512" } as unknown as PolicyLabel)).toThrow();
  });
});
