import { Agent } from "@mastra/core/agent";
import type { MastraModelConfig } from "@mastra/core/llm";
import { Workspace } from "@mastra/core/workspace";
import { SbxMastraSandbox } from "../src/index.js";

/**
 * The example of this package's README, kept as code so it is type-checked and run by test/readme-example.test.ts
 * (with Mastra's mock model), which also checks the README shows these lines verbatim.
 */
export async function compute(model: MastraModelConfig, target: string): Promise<void> {
  // #region example
  const sandbox = new SbxMastraSandbox({ target, createOptions: { timeoutMs: 30 * 60_000 } }); // e.g. "docker://python:3.12-slim"
  const workspace = new Workspace({ sandbox }); // the agent gets workspace_execute_command, run in the sandbox
  const agent = new Agent({ id: "coder", name: "coder", instructions: "Compute with Python in the sandbox.", model, workspace });
  try {
    const result = await agent.generate("What is 6 * 7? Compute it in Python.");
    console.log(result.text);
  } finally {
    await workspace.destroy(); // kills the sandbox
  }
  // #endregion example
}
