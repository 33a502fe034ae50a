import { defineProject } from "vitest/config";

export default defineProject({
  test: {
    name: "modal-emulator",
    include: ["test/**/*.test.ts"],
    // The modal SDK reads ~/.modal.toml when it is imported: keep a developer's real profile out of the tests.
    env: { MODAL_CONFIG_PATH: "/nonexistent" },
    testTimeout: 60_000,
    hookTimeout: 120_000,
  },
});
