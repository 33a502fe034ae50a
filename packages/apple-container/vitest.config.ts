import { defineProject } from "vitest/config";

export default defineProject({
  test: {
    name: "apple-container",
    include: ["test/**/*.test.ts"],
    testTimeout: 120_000,
    hookTimeout: 180_000,
  },
});
