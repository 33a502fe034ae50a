import { capabilitiesSchema } from "@sbx/core";
import { describe, expect, it } from "vitest";
import { createSandboxProvider } from "../src/index.ts";

// The full contract suite runs from contract-tests/example-adapter.contract.test.ts; these are the adapter's own checks.
describe("example adapter", () => {
  it("declares a valid manifest and says it is not an isolation boundary", () => {
    const provider = createSandboxProvider();
    expect(provider.backend).toBe("example");
    expect(provider.isolating).toBe(false);
    capabilitiesSchema.parse(provider.capabilities);
  });

  it("reports whether unshare works here without creating a sandbox", async () => {
    const status = await createSandboxProvider().detect();
    expect(status.backend).toBe("example");
    expect(typeof status.usable).toBe("boolean");
    if (!status.usable) expect(status.remedy.length).toBeGreaterThan(0);
  });
});
