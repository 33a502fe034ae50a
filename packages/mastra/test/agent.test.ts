import { Agent } from "@mastra/core/agent";
import { Workspace, WORKSPACE_TOOLS } from "@mastra/core/workspace";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SbxMastraSandbox } from "../src/index.js";
import { BACKENDS } from "./backends.js";
import { scriptedModel, toolResultsIn } from "./scripted-model.js";

describe.for(BACKENDS)("a Mastra agent drives SbxMastraSandbox on $name", (backend) => {
  let sandbox: SbxMastraSandbox;
  let workspace: Workspace;

  beforeAll(async () => {
    if (!backend.usable) return;
    sandbox = new SbxMastraSandbox({ target: backend.target, createOptions: { timeoutMs: 300_000, metadata: { test: "sbx-mastra" } } });
    workspace = new Workspace({ sandbox });
    await workspace.init();
  });
  afterAll(async () => {
    await workspace?.destroy();
  });

  it("runs the agent's commands in the sandbox through Mastra's execute tool", async (context) => {
    if (!backend.usable) return context.skip(`${backend.name} is not usable here`);
    const tool = WORKSPACE_TOOLS.SANDBOX.EXECUTE_COMMAND;
    const model = scriptedModel([
      () => ({ toolCalls: [{ toolName: tool, input: { command: "printf 'x = 6 * 7\\nprint(x)\\n' > answer.py && python3 answer.py" } }] }),
      () => ({ toolCalls: [{ toolName: tool, input: { command: "echo to-stderr >&2; exit 3" } }] }),
      (prompt) => ({ text: JSON.stringify(toolResultsIn(prompt).map((result) => result.output)) }),
    ]);
    const agent = new Agent({ id: "coder", name: "coder", instructions: "Run what you are asked to.", model, workspace });

    const result = await agent.generate("Compute 6 * 7 in Python.", { maxSteps: 5 });

    const outputs = JSON.parse(result.text) as Array<{ type: string; value: string }>;
    expect(outputs.map((output) => output.value)).toEqual(["42\n", "stderr:\nto-stderr\n\nExit code: 3"]);
    expect(await sandbox.sandbox.files.read("answer.py")).toBe("x = 6 * 7\nprint(x)\n");
  });
});
