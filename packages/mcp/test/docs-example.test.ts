import { readFile } from "node:fs/promises";
import { exampleRegion } from "@sbx/contract";
import { createSandboxProvider } from "@sbx/docker";
import { describe, expect, it, vi } from "vitest";
import { mcpOverHttp } from "../examples/http-client.js";

const IMAGE = process.env.SBX_DOCKER_IMAGE ?? "sbx-test/python:3.11";

describe("docs/integrations/mcp.md", () => {
  it("shows examples/http-client.ts verbatim", async () => {
    const page = await readFile(new URL("../../../docs/integrations/mcp.md", import.meta.url), "utf8");
    expect(page).toContain(await exampleRegion(new URL("../examples/http-client.ts", import.meta.url), "example"));
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
