import type { BaseChatModel } from "@langchain/core/language_models/chat_models";
import { createDeepAgent } from "deepagents";
import { SbxSandbox } from "../src/index.js";

/**
 * The example of this package's README, kept as code so it is type-checked and run by test/readme-example.test.ts
 * (with LangChain's fake chat model), which also checks the README shows these lines verbatim.
 */
export async function runApp(model: BaseChatModel, target: string): Promise<string> {
  // #region example
  await using backend = await SbxSandbox.create(target, { timeoutMs: 30 * 60_000 }); // e.g. "docker://python:3.12-slim"
  await backend.uploadFiles([[`${backend.workspace}/app.py`, new TextEncoder().encode("print(sum(range(10)))\n")]]);

  const agent = createDeepAgent({
    model, // any LangChain chat model with tool calling
    backend, // ls, read_file, write_file, edit_file, delete, glob, grep and execute run in the sandbox
    systemPrompt: `Your files are in ${backend.workspace}; use absolute paths under it.`,
  });
  const result = await agent.invoke({ messages: [{ role: "user", content: "Run app.py and tell me what it prints." }] });
  console.log(result.messages.at(-1)?.text);
  // #endregion example
  return result.messages.at(-1)?.text ?? "";
}
