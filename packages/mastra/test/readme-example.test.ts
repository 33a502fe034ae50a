import { readFile } from "node:fs/promises";
import { exampleRegion } from "@sbx/contract";
import { WORKSPACE_TOOLS } from "@mastra/core/workspace";
import { describe, expect, it, vi } from "vitest";
import { compute } from "../examples/compute.js";
import { BACKENDS } from "./backends.js";
import { scriptedModel, toolResultsIn } from "./scripted-model.js";

describe("packages/mastra/README.md", () => {
  it("shows examples/compute.ts verbatim", async () => {
    const readme = await readFile(new URL("../README.md", import.meta.url), "utf8");
    expect(readme).toContain(await exampleRegion(new URL("../examples/compute.ts", import.meta.url), "example"));
  });

  it.for(BACKENDS.map((backend) => [backend.name, backend.usable, backend.target] as const))(
    "its example runs an agent on %s",
    async ([name, usable, target], context) => {
      if (!usable) return context.skip(`${name} is not usable here`);
      const model = scriptedModel([
        () => ({ toolCalls: [{ toolName: WORKSPACE_TOOLS.SANDBOX.EXECUTE_COMMAND, input: { command: "python3 -c 'print(6 * 7)'" } }] }),
        (prompt) => ({ text: `6 * 7 = ${String((toolResultsIn(prompt)[0]!.output as { value: string }).value).trim()}` }),
      ]);
      const log = vi.spyOn(console, "log").mockImplementation(() => undefined);
      try {
        await compute(model, target);
        expect(log).toHaveBeenCalledWith("6 * 7 = 42");
      } finally {
        log.mockRestore();
      }
    },
  );
});
