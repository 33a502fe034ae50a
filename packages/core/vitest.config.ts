import { defineProject } from "vitest/config";

export default defineProject({
  // Core's tests import src/ directly; the sandbox agent's Python source is a text module there (tsup bundles it the same way).
  plugins: [
    {
      name: "sbx-python-as-text",
      transform: (code: string, id: string) => (id.endsWith(".py") ? { code: `export default ${JSON.stringify(code)};`, map: null } : undefined),
    },
  ],
  test: {
    name: "core",
    include: ["test/**/*.test.ts"],
    testTimeout: 120_000,
    hookTimeout: 180_000,
  },
});
