import { readFile } from "node:fs/promises";
import { describe, expect, it, vi } from "vitest";
import { fibonacciAgent } from "../examples/tool-loop.js";
import { BACKENDS, DOCKER_IMAGE } from "./backends.js";
import { scriptedModel, toolResultsIn } from "./scripted-model.js";

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

describe("docs/integrations/ai-sdk.md", () => {
  it("shows examples/tool-loop.ts verbatim", async () => {
    const page = await readFile(new URL("../../../docs/integrations/ai-sdk.md", import.meta.url), "utf8");
    expect(page).toContain(await region(new URL("../examples/tool-loop.ts", import.meta.url), "example"));
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
