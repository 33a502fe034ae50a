import type { SandboxProviderV1 } from "@sbx/core";
import { defineCapabilities } from "@sbx/core/adapter";
import { describeSandboxContract } from "../src/index.ts";

/**
 * A backend whose detect() says it is unusable: every contract test must skip with the reason (this file passes
 * with all tests skipped), and never call create(). With SBX_REQUIRE=unavailable-self-test they would all fail.
 */
const unavailable: SandboxProviderV1 = {
  specificationVersion: "sbx-v1",
  backend: "unavailable-self-test",
  packageName: "none",
  capabilities: defineCapabilities({ languages: ["python"] }),
  isolating: true,
  detect: async () => ({
    backend: "unavailable-self-test",
    usable: false,
    reason: "this backend never exists",
    remedy: "nothing to do: it is a self-test",
    isolating: true,
  }),
  create: async () => {
    throw new Error("create() must not be called when detect() says the backend is unusable");
  },
};

describeSandboxContract("unavailable backend (self-test)", () => unavailable);
