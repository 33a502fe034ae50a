import { generateText, stepCountIs, tool, ToolLoopAgent } from "ai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { createSandboxSession, createSandboxTools, type SbxSandboxSession } from "../src/index.js";
import { BACKENDS } from "./backends.js";
import { scriptedModel, toolResultsIn } from "./scripted-model.js";

describe.each(BACKENDS)("a real AI SDK tool loop driven by the mock model, on $name", (backend) => {
  let session: SbxSandboxSession;
  beforeAll(async () => {
    if (backend.usable) session = createSandboxSession(await backend.create());
  });
  afterAll(async () => {
    await session?.kill();
  });

  it.skipIf(!backend.usable)("the model asks for a command, the tool runs it in the sandbox, the result comes back into the loop", async () => {
    const model = scriptedModel([
      () => ({ toolCalls: [{ toolName: "runCommand", input: { command: "echo $((6 * 7)); echo note >&2; exit 3" } }] }),
      (prompt) => {
        const [result] = toolResultsIn(prompt);
        const output = (result!.output as { type: string; value: { stdout: string; exitCode: number } }).value;
        return { text: `The sandbox said ${output.stdout.trim()} and exited ${output.exitCode}.` };
      },
    ]);
    const result = await generateText({
      model,
      tools: createSandboxTools(session),
      stopWhen: stepCountIs(5),
      prompt: "What is 6 * 7? Use the sandbox.",
    });
    expect(result.text).toBe("The sandbox said 42 and exited 3.");
    expect(result.steps).toHaveLength(2);
    expect(result.steps[0]!.toolResults.map((toolResult) => [toolResult.toolName, toolResult.output])).toEqual([
      ["runCommand", { exitCode: 3, stdout: "42\n", stderr: "note\n", truncated: false }],
    ]);
  });

  it.skipIf(!backend.usable)("writes, lists, reads and runs code over several steps, with sbx errors returned to the model", async () => {
    const model = scriptedModel([
      () => ({ toolCalls: [{ toolName: "writeFile", input: { path: "work/data.csv", content: "a,b\n1,2\n3,4\n" } }] }),
      () => ({
        toolCalls: [
          { toolName: "listFolder", input: { path: "work" } },
          { toolName: "readFile", input: { path: "work/missing.txt" } },
        ],
      }),
      () => ({
        toolCalls: [
          {
            toolName: "runCode",
            input: { code: "rows = open('work/data.csv').read().splitlines()[1:]\nprint(sum(int(v) for r in rows for v in r.split(',')))" },
          },
        ],
      }),
      () => ({ toolCalls: [{ toolName: "readFile", input: { path: "work/data.csv" } }] }),
      () => ({ text: "done" }),
    ]);
    const result = await generateText({ model, tools: createSandboxTools(session.sandbox), stopWhen: stepCountIs(10), prompt: "Sum the CSV." });
    const outputs = result.steps.flatMap((step) => step.toolResults.map((toolResult) => [toolResult.toolName, toolResult.output]));
    expect(outputs).toEqual([
      ["writeFile", { path: "work/data.csv", size: 12 }],
      ["listFolder", { entries: [{ name: "data.csv", type: "file", size: 12 }] }],
      ["readFile", { error: { code: "SBX_FILE_NOT_FOUND", message: expect.stringContaining("missing.txt"), retryable: false } }],
      // Backends with a rich-result channel (Docker through the sandbox agent) answer []; others null.
      ["runCode", { stdout: "10\n", stderr: "", error: null, results: session.sandbox.capabilities.RICH_RESULTS ? [] : null, truncated: false }],
      ["readFile", { path: "work/data.csv", size: 12, content: "a,b\n1,2\n3,4\n", truncated: false }],
    ]);
    expect(result.text).toBe("done");
  });

  it.skipIf(!backend.usable)("cuts long output for the model and says how much there was", async () => {
    const model = scriptedModel([
      () => ({ toolCalls: [{ toolName: "runCommand", input: { command: "printf 'y%.0s' $(seq 1 3000)" } }] }),
      () => ({ text: "ok" }),
    ]);
    const result = await generateText({ model, tools: createSandboxTools(session, { maxOutputBytes: 100 }), stopWhen: stepCountIs(3), prompt: "x" });
    expect(result.steps[0]!.toolResults[0]!.output).toEqual({
      exitCode: 0,
      stdout: `${"y".repeat(100)}\n[output truncated: showing the first 100 of 3000 bytes]`,
      stderr: "",
      truncated: true,
    });
  });

  it.skipIf(!backend.usable)("passes the session as experimental_sandbox to tools, in generateText and ToolLoopAgent", async () => {
    const shell = tool({
      description: "Run a command in whatever sandbox the harness provides.",
      inputSchema: z.object({ command: z.string() }),
      execute: async ({ command }, { experimental_sandbox: sandbox }) => {
        if (!sandbox) throw new Error("no sandbox was provided");
        return { ...(await sandbox.run({ command, workingDirectory: "sub" })), canKill: "kill" in sandbox, description: sandbox.description };
      },
    });
    await session.sandbox.files.mkdir("sub");
    const turns = () => [() => ({ toolCalls: [{ toolName: "shell", input: { command: "pwd" } }] }), () => ({ text: "ok" })];
    const viaGenerateText = await generateText({
      model: scriptedModel(turns()),
      tools: { shell },
      experimental_sandbox: session.restricted(),
      stopWhen: stepCountIs(3),
      prompt: "where am I?",
    });
    const agent = new ToolLoopAgent({ model: scriptedModel(turns()), tools: { shell }, stopWhen: stepCountIs(3) });
    const viaAgent = await agent.generate({ prompt: "where am I?", experimental_sandbox: session.restricted() });
    for (const result of [viaGenerateText, viaAgent]) {
      const output = result.steps[0]!.toolResults[0]!.output as { exitCode: number; stdout: string; canKill: boolean; description: string };
      expect(output.exitCode).toBe(0);
      expect(output.stdout).toBe(`${session.sandbox.workspace}/sub\n`);
      expect(output.canKill).toBe(false);
      expect(output.description).toContain(`isolated ${backend.name} sandbox`);
    }
  });
});
