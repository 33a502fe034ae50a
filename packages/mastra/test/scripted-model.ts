import { MastraLanguageModelV2Mock } from "@mastra/core/test-utils/llm-mock";

type CallOptions = MastraLanguageModelV2Mock["doStreamCalls"][number];
type StreamPart = { type: string } & Record<string, unknown>;

const USAGE = { inputTokens: 10, outputTokens: 5, totalTokens: 15 };

/** One model turn: tool calls to make, or final text. Gets the prompt so far (with earlier tool results). */
export type ScriptedTurn = (prompt: CallOptions["prompt"]) => { toolCalls: Array<{ toolName: string; input: unknown }> } | { text: string };

/** The tool results the model has been shown so far, as Mastra put them into the prompt. */
export function toolResultsIn(prompt: CallOptions["prompt"]): Array<{ toolName: string; output: unknown }> {
  const results: Array<{ toolName: string; output: unknown }> = [];
  for (const message of prompt) {
    if (message.role !== "tool") continue;
    for (const part of message.content) if (part.type === "tool-result") results.push({ toolName: part.toolName, output: part.output });
  }
  return results;
}

function stream(parts: StreamPart[]): ReadableStream<never> {
  return new ReadableStream({
    start(controller) {
      for (const part of parts) controller.enqueue(part as never);
      controller.close();
    },
  });
}

/**
 * Mastra's own mock language model, answering turn by turn from a script: a real Mastra agent loop runs against it
 * (Mastra validates tool inputs, executes tools and feeds results back into the next prompt).
 */
export function scriptedModel(turns: ScriptedTurn[]): MastraLanguageModelV2Mock {
  let turn = 0;
  const next = (prompt: CallOptions["prompt"]) => {
    const script = turns[turn];
    turn += 1;
    if (!script) throw new Error(`the script has no turn ${turn}`);
    return script(prompt);
  };
  return new MastraLanguageModelV2Mock({
    doGenerate: async (options) => {
      const answer = next(options.prompt);
      if ("text" in answer) return { content: [{ type: "text", text: answer.text }], finishReason: "stop", usage: USAGE, warnings: [] };
      return {
        content: answer.toolCalls.map((call, index) => ({
          type: "tool-call" as const,
          toolCallId: `call-${turn}-${index}`,
          toolName: call.toolName,
          input: JSON.stringify(call.input),
        })),
        finishReason: "tool-calls",
        usage: USAGE,
        warnings: [],
      };
    },
    doStream: async (options) => {
      const answer = next(options.prompt);
      if ("text" in answer)
        return {
          stream: stream([
            { type: "stream-start", warnings: [] },
            { type: "text-start", id: `text-${turn}` },
            { type: "text-delta", id: `text-${turn}`, delta: answer.text },
            { type: "text-end", id: `text-${turn}` },
            { type: "finish", finishReason: "stop", usage: USAGE },
          ]),
        };
      return {
        stream: stream([
          { type: "stream-start", warnings: [] },
          ...answer.toolCalls.map((call, index) => ({
            type: "tool-call",
            toolCallId: `call-${turn}-${index}`,
            toolName: call.toolName,
            input: JSON.stringify(call.input),
          })),
          { type: "finish", finishReason: "tool-calls", usage: USAGE },
        ]),
      };
    },
  });
}
