import { run, type Model } from "@openai/agents-core";
import { SandboxAgent, shell } from "@openai/agents-core/sandbox";
import { SbxSandboxClient } from "../src/index.js";

/**
 * The example of this package's README, kept as code so it is type-checked and run by test/readme-example.test.ts
 * (with the SDK's ScriptedModel), which also checks the README shows these lines verbatim.
 */
export async function compute(model: Model | string, target: string): Promise<void> {
  // #region example
  const client = new SbxSandboxClient({ target, createOptions: { timeoutMs: 30 * 60_000 } }); // e.g. "docker://python:3.12-slim"
  const agent = new SandboxAgent({ name: "coder", instructions: "Compute with Python.", model, capabilities: [shell()] });
  const result = await run(agent, "What is 6 * 7? Compute it in Python.", { sandbox: { client } }); // one sandbox per run, killed at its end
  console.log(result.finalOutput);
  // #endregion example
}
