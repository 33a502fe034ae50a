import { createSandbox } from "@sbx/core";
import { generateText, stepCountIs, type LanguageModel } from "ai";
import { createSandboxSession, createSandboxTools } from "../src/index.js";

/**
 * The example of docs/integrations/ai-sdk.md, kept as code so it is type-checked and run by
 * test/docs-example.test.ts (with the AI SDK's mock model), which also checks the page shows these lines verbatim.
 */
export async function fibonacciAgent(model: LanguageModel, target: string): Promise<string> {
  // #region example
  await using session = createSandboxSession(await createSandbox(target)); // e.g. "docker://python:3.12-slim"

  const result = await generateText({
    model,
    system: session.description, // where commands run, the workspace, the network policy
    tools: createSandboxTools(session), // runCommand, runCode, readFile, writeFile, listFolder
    experimental_sandbox: session.restricted(), // for tools that use the harness sandbox; cannot kill it
    stopWhen: stepCountIs(10),
    prompt: "What is the 20th Fibonacci number? Compute it in Python.",
  });
  console.log(result.text);
  // #endregion example
  return result.text;
}
