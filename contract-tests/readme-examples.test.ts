import { readFile } from "node:fs/promises";
import { createSandboxProvider } from "@sbx/docker";
import { describe, expect, it, vi } from "vitest";
import { readmeUsage } from "../docs/examples/readme-usage.js";

const root = new URL("../", import.meta.url);

/** The lines between `// #region name` and `// #endregion name`, dedented. */
async function region(file: string, name: string): Promise<string> {
  const text = await readFile(new URL(file, root), "utf8");
  const lines = text.split("\n");
  const start = lines.findIndex((line) => line.trim() === `// #region ${name}`);
  const end = lines.findIndex((line) => line.trim() === `// #endregion ${name}`);
  const body = lines.slice(start + 1, end);
  const indent = Math.min(...body.filter((line) => line.trim()).map((line) => line.length - line.trimStart().length));
  return body.map((line) => line.slice(indent)).join("\n");
}

describe("README examples", () => {
  it("the README's Usage section shows docs/examples/readme-usage.ts verbatim", async () => {
    const readme = await readFile(new URL("README.md", root), "utf8");
    expect(readme).toContain(await region("docs/examples/readme-usage.ts", "usage"));
  });

  it("the Usage example runs on Docker and prints a result, an execution and the audit record", async (context) => {
    const status = await createSandboxProvider().detect();
    const required = (process.env.SBX_REQUIRE ?? "").split(",").includes("docker");
    if (!status.usable && !required) return context.skip(`Docker is not usable here: ${status.reason}`);
    const printed: string[] = [];
    const log = vi.spyOn(console, "log").mockImplementation((...values: unknown[]) => void printed.push(values.map(String).join(" ")));
    const previousImage = process.env.SBX_DOCKER_IMAGE;
    process.env.SBX_DOCKER_IMAGE = previousImage ?? "sbx-test/python:3.11";
    try {
      await readmeUsage();
    } finally {
      log.mockRestore();
      if (previousImage === undefined) delete process.env.SBX_DOCKER_IMAGE;
    }
    expect(printed[0]).toMatch(/^0 /);
    expect(printed[1]).toContain("3.14159");
    expect(JSON.parse(printed[2]!)).toMatchObject({ backend: "docker", environment: { secrets: ["API_TOKEN"] } });
  });
});
