import { AIMessage, ToolMessage, type BaseMessage } from "@langchain/core/messages";
import { fakeModel } from "@langchain/core/testing";
import { createDeepAgent, type SandboxBackendProtocolV2 } from "deepagents";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SbxSandbox } from "../src/index.js";
import { BACKENDS } from "./backends.js";

const APP = "def greet():\n    return 'hello'\n\nprint(greet())\n";

/** The text of every tool message the agent produced, by tool name, in order. */
function toolOutputs(messages: BaseMessage[]): Array<{ name: string; text: string }> {
  return messages
    .filter((message): message is ToolMessage => ToolMessage.isInstance(message))
    .map((message) => ({
      name: message.name ?? "",
      text: typeof message.content === "string" ? message.content : message.content.map((part) => ("text" in part ? part.text : "")).join(""),
    }));
}

describe.for(BACKENDS)("a deepagents agent drives SbxSandbox on $name", (backend) => {
  let sandbox: SbxSandbox;

  beforeAll(async () => {
    if (backend.usable) sandbox = await SbxSandbox.create(backend.target, { timeoutMs: 300_000, metadata: { test: "sbx-deepagents" } });
  });
  afterAll(async () => {
    await sandbox?.close();
  });

  it("reads, edits, greps, globs, lists and executes through deepagents' own tools", async (context) => {
    if (!backend.usable) return context.skip(`${backend.name} is not usable here`);
    const backendForAgent = sandbox satisfies SandboxBackendProtocolV2;
    const project = `${sandbox.workspace}/project`;
    expect(await sandbox.uploadFiles([[`${project}/app.py`, new TextEncoder().encode(APP)]])).toEqual([{ path: `${project}/app.py`, error: null }]);
    await sandbox.sandbox.files.write(`${project}/docs/notes.md`, "greet says hello\n");

    const model = fakeModel()
      .respondWithTools([{ name: "ls", args: { path: project }, id: "ls-1" }])
      .respondWithTools([{ name: "read_file", args: { file_path: `${project}/app.py` }, id: "read-1" }])
      .respondWithTools([
        { name: "edit_file", args: { file_path: `${project}/app.py`, old_string: "'hello'", new_string: "'hello, sbx'" }, id: "edit-1" },
      ])
      .respondWithTools([{ name: "grep", args: { pattern: "hello, sbx", path: project }, id: "grep-1" }])
      .respondWithTools([{ name: "glob", args: { pattern: "**/*.md", path: project }, id: "glob-1" }])
      .respondWithTools([{ name: "execute", args: { command: `python3 ${project}/app.py; echo to-stderr >&2; echo last; exit 3` }, id: "execute-1" }])
      .respond(new AIMessage("All done."));
    const agent = createDeepAgent({ model, backend: backendForAgent, systemPrompt: `Work under ${sandbox.workspace}.` });

    const result = await agent.invoke({ messages: [{ role: "user", content: "Make greet() say hello, sbx and run it." }] }, { recursionLimit: 40 });

    const outputs = toolOutputs(result.messages);
    expect(outputs.map((output) => output.name)).toEqual(["ls", "read_file", "edit_file", "grep", "glob", "execute"]);
    const [ls, read, edit, grep, glob, execute] = outputs.map((output) => output.text);
    // Docker's find lists in directory order, the file API by name: the set is the same.
    expect(ls.split("\n").sort()).toEqual([`${project}/app.py (${APP.length} bytes)`, `${project}/docs/ (directory)`]);
    expect(read).toContain("def greet():");
    expect(read).toContain("return 'hello'");
    expect(edit).toBe(`Successfully replaced 1 occurrence(s) in '${project}/app.py'`);
    expect(grep).toBe(`${project}/app.py:\n  2:     return 'hello, sbx'`);
    expect(glob).toBe("docs/notes.md");
    // stdout and stderr in the order the process wrote them, then deepagents' exit-code line.
    expect(execute).toBe("hello, sbx\nto-stderr\nlast\n\n[Command failed with exit code 3]");
    expect(await sandbox.sandbox.files.read(`${project}/app.py`)).toBe(APP.replace("'hello'", "'hello, sbx'"));
    expect(result.messages.at(-1)?.content).toBe("All done.");
  });
});
