import { defineProject } from "vitest/config";

export default defineProject({
  test: {
    name: "modal",
    include: ["test/**/*.test.ts"],
    // The modal SDK reads ~/.modal.toml when it is imported: keep a developer's real profile out of the tests.
    env: { MODAL_CONFIG_PATH: "/nonexistent" },
    testTimeout: 120_000,
    hookTimeout: 180_000,
  },
});
