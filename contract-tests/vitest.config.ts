import { defineProject } from "vitest/config";

export default defineProject({
  test: {
    name: "contract",
    include: ["**/*.test.ts"],
    // The Modal contract runs in parallel with the rest, in this project (ADR 0028: the bytes it lost under load were
    // cut by the adapter after a 1 s grace, not lost by the emulator).
    // The modal SDK reads ~/.modal.toml when it is imported: keep a developer's real profile out of the tests.
    env: { MODAL_CONFIG_PATH: "/nonexistent" },
    testTimeout: 120_000,
    hookTimeout: 180_000,
  },
});
