import { readFile } from "node:fs/promises";
import { createSandboxProvider } from "@sbx/docker";
import { describe, expect, it, vi } from "vitest";
import { mcpOverHttp } from "../examples/http-client.js";

const IMAGE = process.env.SBX_DOCKER_IMAGE ?? "sbx-test/python:3.11";

/** The lines between `// #region name` and `// #endregion name`, dedented. */
async function region(file: URL, name: string): Promise<string> {
  const lines = (await readFile(file, "utf8")).split("\n");
  const body = lines.slice(
    lines.findIndex((line) => line.trim() === `// #region ${name}`) + 1,
    lines.findIndex((line) => line.trim() === `// #endregion ${name}`),
  );
  const indent = Math.min(...body.filter((line) => line.trim()).map((line) => line.length - line.trimStart().length));
  return body.map((line) => line.slice(indent)).join("\n");
}

describe("docs/integrations/mcp.md", () => {
  it("shows examples/http-client.ts verbatim", async () => {
    const page = await readFile(new URL("../../../docs/integrations/mcp.md", import.meta.url), "utf8");
    expect(page).toContain(await region(new URL("../examples/http-client.ts", import.meta.url), "example"));
  });

  it.for(["fake://", `docker://${IMAGE}`])("its example runs on %s", async (target, context) => {
    if (target.startsWith("docker")) {
      const status = await createSandboxProvider({ image: IMAGE }).detect();
      const required = (process.env.SBX_REQUIRE ?? "").split(",").includes("docker");
      if (!status.usable && !required) return context.skip(`Docker is not usable here: ${status.reason}`);
    }
    const log = vi.spyOn(console, "log").mockImplementation(() => undefined);
    try {
      expect(await mcpOverHttp(target)).toMatchObject({ exitCode: 0, stdout: "42\n", stderr: "" });
    } finally {
      log.mockRestore();
    }
  });
});
