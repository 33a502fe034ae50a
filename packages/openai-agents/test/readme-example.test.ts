import { readFile } from "node:fs/promises";
import { assistantMessage, functionCall, ScriptedModel } from "@openai/agents-core/testing";
import { describe, expect, it, vi } from "vitest";
import { compute } from "../examples/compute.js";
import { BACKENDS } from "./backends.js";

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

describe("packages/openai-agents/README.md", () => {
  it("shows examples/compute.ts verbatim", async () => {
    const readme = await readFile(new URL("../README.md", import.meta.url), "utf8");
    expect(readme).toContain(await region(new URL("../examples/compute.ts", import.meta.url), "example"));
  });

  it.for(BACKENDS.map((backend) => [backend.name, backend.usable, backend.target] as const))(
    "its example runs an agent on %s",
    async ([name, usable, target], context) => {
      if (!usable) return context.skip(`${name} is not usable here`);
      const model = new ScriptedModel([
        [functionCall("exec_command", { cmd: "python3 -c 'print(6 * 7)'" }, { callId: "call-1" })],
        [assistantMessage("6 * 7 = 42")],
      ]);
      const log = vi.spyOn(console, "log").mockImplementation(() => undefined);
      try {
        await compute(model, target);
        expect(log).toHaveBeenCalledWith("6 * 7 = 42");
        expect(model.calls).toHaveLength(2);
        expect(JSON.stringify(model.calls[1]!.request.input)).toContain("Output:\\n42\\n");
      } finally {
        log.mockRestore();
      }
    },
  );
});
