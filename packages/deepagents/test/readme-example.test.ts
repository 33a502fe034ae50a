import { readFile } from "node:fs/promises";
import { exampleRegion } from "@sbx/contract";
import { AIMessage, ToolMessage } from "@langchain/core/messages";
import { fakeModel } from "@langchain/core/testing";
import { describe, expect, it, vi } from "vitest";
import { runApp } from "../examples/run-app.js";
import { BACKENDS } from "./backends.js";

describe("packages/deepagents/README.md", () => {
  it("shows examples/run-app.ts verbatim", async () => {
    const readme = await readFile(new URL("../README.md", import.meta.url), "utf8");
    expect(readme).toContain(await exampleRegion(new URL("../examples/run-app.ts", import.meta.url), "example"));
  });

  it.for(BACKENDS.map((backend) => [backend.name, backend.usable, backend.target] as const))(
    "its example runs an agent on %s",
    async ([name, usable, target], context) => {
      if (!usable) return context.skip(`${name} is not usable here`);
      const model = fakeModel()
        .respondWithTools([{ name: "execute", args: { command: "python3 app.py" }, id: "execute-1" }])
        .respond((messages) => {
          const output = messages.filter((message) => ToolMessage.isInstance(message)).at(-1)?.text ?? "";
          return new AIMessage(`app.py prints ${output.split("\n")[0]}.`);
        });
      const log = vi.spyOn(console, "log").mockImplementation(() => undefined);
      try {
        const text = await runApp(model, target);
        expect(text).toBe("app.py prints 45.");
        expect(log).toHaveBeenCalledWith("app.py prints 45.");
      } finally {
        log.mockRestore();
      }
    },
  );
});
