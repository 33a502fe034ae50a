import { defineConfig } from "vitest/config";

/**
 * One vitest run over every package's tests and the contract suite against every adapter, so the run ends
 * with a single summary. Packages are imported through their built `dist/` (run `pnpm build` first; `npm test` does).
 */
export default defineConfig({
  test: {
    projects: ["packages/*/vitest.config.ts", "contract-tests/vitest.config.ts", "tools/*/vitest.config.ts", "examples/*/vitest.config.ts"],
    reporters: ["default"],
  },
});
