import { MockLanguageModelV4 } from "ai/test";

type LanguageModelV4CallOptions = Parameters<MockLanguageModelV4["doGenerate"]>[0];
type LanguageModelV4GenerateResult = Awaited<ReturnType<MockLanguageModelV4["doGenerate"]>>;

const USAGE = { inputTokens: { total: 10, noCache: 10, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: 5, text: 5, reasoning: 0 } };

/** One model turn: tool calls to make, or final text. Gets the prompt so far (with earlier tool results). */
export type ScriptedTurn = (
  prompt: LanguageModelV4CallOptions["prompt"],
) => { toolCalls: Array<{ toolName: string; input: unknown }> } | { text: string };

/** The tool results the model has been shown so far, by tool name, as the AI SDK put them into the prompt. */
export function toolResultsIn(prompt: LanguageModelV4CallOptions["prompt"]): Array<{ toolName: string; output: unknown }> {
  const results: Array<{ toolName: string; output: unknown }> = [];
  for (const message of prompt) {
    if (message.role !== "tool") continue;
    for (const part of message.content) if (part.type === "tool-result") results.push({ toolName: part.toolName, output: part.output });
  }
  return results;
}

/**
 * The AI SDK's own mock language model, answering turn by turn from a script: a real `generateText` tool loop runs
 * against it (the SDK validates tool inputs, executes tools and feeds results back into the next prompt).
 */
export function scriptedModel(turns: ScriptedTurn[]): MockLanguageModelV4 {
  let turn = 0;
  return new MockLanguageModelV4({
    doGenerate: async (options): Promise<LanguageModelV4GenerateResult> => {
      const script = turns[turn];
      turn += 1;
      if (!script) throw new Error(`the script has no turn ${turn}`);
      const answer = script(options.prompt);
      if ("text" in answer)
        return { content: [{ type: "text", text: answer.text }], finishReason: { unified: "stop", raw: "stop" }, usage: USAGE, warnings: [] };
      return {
        content: answer.toolCalls.map((call, index) => ({
          type: "tool-call" as const,
          toolCallId: `call-${turn}-${index}`,
          toolName: call.toolName,
          input: JSON.stringify(call.input),
        })),
        finishReason: { unified: "tool-calls", raw: "tool_calls" },
        usage: USAGE,
        warnings: [],
      };
    },
  });
}
