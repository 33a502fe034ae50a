import { readFile } from "node:fs/promises";
import { exampleRegion } from "@sbx/contract";
import { describe, expect, it, vi } from "vitest";
import { fibonacciAgent } from "../examples/tool-loop.js";
import { BACKENDS, DOCKER_IMAGE } from "./backends.js";
import { scriptedModel, toolResultsIn } from "./scripted-model.js";

describe("docs/integrations/ai-sdk.md", () => {
  it("shows examples/tool-loop.ts verbatim", async () => {
    const page = await readFile(new URL("../../../docs/integrations/ai-sdk.md", import.meta.url), "utf8");
    expect(page).toContain(await exampleRegion(new URL("../examples/tool-loop.ts", import.meta.url), "example"));
  });

  it.for(BACKENDS.map((backend) => [backend.name, backend.usable] as const))(
    "its example runs a tool loop on %s",
    async ([name, usable], context) => {
      if (!usable) return context.skip(`${name} is not usable here`);
      const model = scriptedModel([
        () => ({ toolCalls: [{ toolName: "runCode", input: { code: "a, b = 0, 1\nfor _ in range(20):\n    a, b = b, a + b\nprint(a)" } }] }),
        (prompt) => ({
          text: `The 20th Fibonacci number is ${(toolResultsIn(prompt)[0]!.output as { value: { stdout: string } }).value.stdout.trim()}.`,
        }),
      ]);
      const log = vi.spyOn(console, "log").mockImplementation(() => undefined);
      try {
        const text = await fibonacciAgent(model, name === "fake" ? "fake://" : `docker://${DOCKER_IMAGE}`);
        expect(text).toBe("The 20th Fibonacci number is 6765.");
        expect(log).toHaveBeenCalledWith("The 20th Fibonacci number is 6765.");
      } finally {
        log.mockRestore();
      }
    },
  );
});
