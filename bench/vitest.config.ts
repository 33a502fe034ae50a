import { defineProject } from "vitest/config";

export default defineProject({
  test: {
    name: "bench",
    include: ["test/**/*.test.ts"],
    // The modal SDK reads ~/.modal.toml when it is imported: keep a developer's real profile out of the benches.
    env: { MODAL_CONFIG_PATH: "/nonexistent" },
    // Generous: the benches run side by side and each starts containers (or Pyodide); a loaded machine is slow.
    testTimeout: 600_000,
  },
});
