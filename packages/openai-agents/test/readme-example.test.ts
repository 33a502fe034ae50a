import { readFile } from "node:fs/promises";
import { exampleRegion } from "@sbx/contract";
import { assistantMessage, functionCall, ScriptedModel } from "@openai/agents-core/testing";
import { describe, expect, it, vi } from "vitest";
import { compute } from "../examples/compute.js";
import { BACKENDS } from "./backends.js";

describe("packages/openai-agents/README.md", () => {
  it("shows examples/compute.ts verbatim", async () => {
    const readme = await readFile(new URL("../README.md", import.meta.url), "utf8");
    expect(readme).toContain(await exampleRegion(new URL("../examples/compute.ts", import.meta.url), "example"));
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
