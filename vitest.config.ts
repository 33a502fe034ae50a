import { defineConfig } from "vitest/config";
import LongestFirstSequencer from "./vitest.sequencer.ts";

/**
 * One vitest run over every package's tests and the contract suite against every adapter, so the run ends
 * with a single summary. Packages are imported through their built `dist/` (run `pnpm build` first; `npm test` does).
 *
 * Test files run in parallel (ADR 0024): most of the time is spent waiting on containers, emulators and sleeping
 * shells, not on the CPU, so more workers than cores pays off; the slowest files start first. Every file cleans up
 * only what it created and binds ephemeral ports, so files do not interfere. `--maxWorkers=1` restores the old
 * one-file-at-a-time run.
 */
export default defineConfig({
  test: {
    projects: [
      "packages/*/vitest.config.ts",
      "contract-tests/vitest.config.ts",
      "tools/*/vitest.config.ts",
      "examples/*/vitest.config.ts",
      "bench/vitest.config.ts",
    ],
    reporters: ["default"],
    maxWorkers: 3,
    sequence: { sequencer: LongestFirstSequencer },
  },
});
