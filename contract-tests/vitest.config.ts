import { configDefaults, defineProject } from "vitest/config";

export default defineProject({
  test: {
    name: "contract",
    include: ["**/*.test.ts"],
    // The Modal contract runs alone after the rest: vitest.modal.config.ts (ADR 0024).
    exclude: [...configDefaults.exclude, "modal.contract.test.ts"],
    // The modal SDK reads ~/.modal.toml when it is imported: keep a developer's real profile out of the tests.
    env: { MODAL_CONFIG_PATH: "/nonexistent" },
    testTimeout: 120_000,
    hookTimeout: 180_000,
  },
});
