import { run } from "@openai/agents-core";
import { SandboxAgent, shell } from "@openai/agents-core/sandbox";
import { assistantMessage, functionCall, modelResponder, ScriptedModel } from "@openai/agents-core/testing";
import { describe, expect, it } from "vitest";
import { SbxSandboxClient, type SbxSandboxSession } from "../src/index.js";
import { BACKENDS } from "./backends.js";

/** The output the SDK fed back for each function call, in order. */
function functionOutputs(input: unknown): string[] {
  if (!Array.isArray(input)) return [];
  return input
    .filter(
      (item): item is { type: string; output: unknown } =>
        typeof item === "object" && item !== null && (item as { type?: string }).type === "function_call_result",
    )
    .map((item) => {
      const output = item.output as { type?: string; text?: string } | string;
      return typeof output === "string" ? output : (output.text ?? JSON.stringify(output));
    });
}

describe.for(BACKENDS)("an OpenAI Agents SandboxAgent drives SbxSandboxClient on $name", (backend) => {
  it("runs exec_command in an sbx sandbox, output in order, and ends the sandbox with the run", async (context) => {
    if (!backend.usable) return context.skip(`${backend.name} is not usable here`);
    const client = new SbxSandboxClient({ target: backend.target, createOptions: { timeoutMs: 300_000, metadata: { test: "sbx-openai-agents" } } });
    const sessions: SbxSandboxSession[] = [];
    const recordingClient: typeof client = Object.assign(Object.create(client) as typeof client, {
      create: async (...args: Parameters<typeof client.create>) => {
        const session = (await client.create(...args)) as SbxSandboxSession;
        sessions.push(session);
        return session;
      },
    });
    const seen: string[][] = [];
    const model = new ScriptedModel([
      [functionCall("exec_command", { cmd: "echo o1; echo e1 >&2; python3 -c 'print(6 * 7)'; exit 3" }, { callId: "call-1" })],
      modelResponder((call) => {
        seen.push(functionOutputs(call.request.input));
        return [assistantMessage("done")];
      }),
    ]);
    const agent = new SandboxAgent({ name: "coder", instructions: "Run what you are asked to.", model, capabilities: [shell()] });

    const result = await run(agent, "Compute 6 * 7.", { sandbox: { client: recordingClient } });

    expect(result.finalOutput).toBe("done");
    expect(seen).toHaveLength(1);
    expect(seen[0]).toHaveLength(1);
    // stdout and stderr in the order the process wrote them, in the SDK's own exec format.
    expect(seen[0]![0]).toMatch(/^Chunk ID: [0-9a-f]+\nWall time: \d+\.\d+ seconds\nProcess exited with code 3\nOutput:\no1\ne1\n42\n$/);
    expect(sessions).toHaveLength(1);
    expect(sessions[0]!.sandbox.closed).toBe(true);
  });
});
