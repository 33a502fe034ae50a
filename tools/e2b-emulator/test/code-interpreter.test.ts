import { describe, expect, it } from "vitest";
import { codeInterpreterForSuite } from "./emulator-fixture.js";
import { skipDockerTests } from "./docker-availability.js";

describe.skipIf(skipDockerTests)("code interpreter (@e2b/code-interpreter runCode)", () => {
  const { sandbox } = codeInterpreterForSuite();

  it("runs code in the default context, keeps state and returns the last expression", async () => {
    const stdout: string[] = [];
    const first = await sandbox().runCode("import os\ncounter = 41\nprint('hello from', os.getcwd())\ncounter + 1", {
      onStdout: (message) => void stdout.push(message.line),
    });
    expect(first.text).toBe("42");
    expect(first.results[0]).toMatchObject({ isMainResult: true, text: "42" });
    expect(first.logs.stdout).toEqual(["hello from /home/user\n"]);
    expect(stdout).toEqual(["hello from /home/user\n"]);
    expect(first.error).toBeUndefined();
    const second = await sandbox().runCode("counter += 1\ncounter");
    expect(second.text).toBe("42");
    const none = await sandbox().runCode("x = None\nx");
    expect(none.results).toEqual([]);
    // The real server strips one pair of enclosing quotes from text/plain (api/models/result.py).
    const text = await sandbox().runCode("'quoted'");
    expect(text.text).toBe("quoted");
    expect((await sandbox().runCode('"it\'s"')).text).toBe("it's");
    expect((await sandbox().runCode("['a', 'b']")).text).toBe("['a', 'b']");
  });

  it("streams stderr, honours env vars and reports errors with name, value and traceback", async () => {
    const execution = await sandbox().runCode(
      "import sys, os\nprint('to stderr', file=sys.stderr)\nprint(os.environ['EXTRA'])\ndef inner():\n    raise ValueError('bad value')\ninner()",
      { envs: { EXTRA: "extra-value" } },
    );
    expect(execution.logs.stderr).toEqual(["to stderr\n"]);
    expect(execution.logs.stdout).toEqual(["extra-value\n"]);
    expect(execution.error).toMatchObject({ name: "ValueError", value: "bad value" });
    expect(execution.error?.traceback).toContain("inner");
    expect(execution.error?.traceback).toContain("ValueError: bad value");
    const syntax = await sandbox().runCode("def broken(:");
    expect(syntax.error?.name).toBe("SyntaxError");
    const after = await sandbox().runCode("import os\nos.environ.get('EXTRA')");
    expect(after.results).toEqual([]);
  });

  it("isolates contexts and supports list, restart and remove", async () => {
    const first = await sandbox().createCodeContext();
    const second = await sandbox().createCodeContext({ cwd: "/tmp" });
    expect(first.language).toBe("python");
    await sandbox().runCode("value = 'first'", { context: first });
    await sandbox().runCode("value = 'second'", { context: second });
    expect((await sandbox().runCode("value", { context: first })).text).toBe("first");
    expect((await sandbox().runCode("value", { context: second })).text).toBe("second");
    expect((await sandbox().runCode("import os; os.getcwd()", { context: second })).text).toBe("/tmp");
    const isolated = await sandbox().runCode("value", {});
    expect(isolated.error?.name).toBe("NameError");

    const contexts = await sandbox().listCodeContexts();
    expect(contexts.map((context) => context.id)).toEqual(expect.arrayContaining([first.id, second.id]));

    await sandbox().restartCodeContext(first);
    expect((await sandbox().runCode("value", { context: first })).error?.name).toBe("NameError");
    await sandbox().removeCodeContext(second);
    await expect(sandbox().runCode("1", { context: second })).rejects.toMatchObject({ name: "NotFoundError" });
  });

  it("runs concurrent executions of different contexts in parallel and serializes within one", async () => {
    const left = await sandbox().createCodeContext();
    const right = await sandbox().createCodeContext();
    const started = Date.now();
    const [a, b] = await Promise.all([
      sandbox().runCode("import time\ntime.sleep(2)\n'left'", { context: left }),
      sandbox().runCode("import time\ntime.sleep(2)\n'right'", { context: right }),
    ]);
    expect([a.text, b.text]).toEqual(["left", "right"]);
    expect(Date.now() - started).toBeLessThan(3_800);
    const [x, y] = await Promise.all([sandbox().runCode("shared = 1", { context: left }), sandbox().runCode("shared + 1", { context: left })]);
    expect(x.error).toBeUndefined();
    expect(y.text).toBe("2");
  });

  it("interrupts a cell when the SDK times out, keeping the context usable", async () => {
    const context = await sandbox().createCodeContext();
    await sandbox().runCode("kept = 'state'", { context });
    const started = Date.now();
    const timedOut = await sandbox()
      .runCode("import time\nwhile True: time.sleep(0.1)", { context, timeoutMs: 1_000 })
      .catch((error: Error) => error);
    expect(timedOut).toMatchObject({ name: "TimeoutError" });
    expect(Date.now() - started).toBeLessThan(10_000);
    const after = await sandbox().runCode("kept", { context });
    expect(after.text).toBe("state");
    expect(after.error).toBeUndefined();
  });

  it("a kernel that dies mid-cell ends the execution with ContextRestarting and comes back without its state", async () => {
    const context = await sandbox().createCodeContext();
    await sandbox().runCode("kept = 1", { context });
    const died = await sandbox().runCode("import os\nos._exit(3)", { context });
    expect(died.error).toMatchObject({ name: "ContextRestarting", value: "Context was restarted" });
    const after = await sandbox().runCode("kept", { context });
    expect(after.error?.name).toBe("NameError");
    expect((await sandbox().runCode("1 + 1", { context })).text).toBe("2");
  });

  it("a context restarted under a running cell ends it as the real server does (WebSocketError, then UnexpectedEndOfExecution)", async () => {
    const context = await sandbox().createCodeContext();
    const errors: string[] = [];
    const running = sandbox().runCode("import time\ntime.sleep(60)", { context, onError: (error) => void errors.push(error.name) });
    await new Promise((resolve) => setTimeout(resolve, 500));
    await sandbox().restartCodeContext(context);
    const execution = await running;
    expect(errors).toEqual(["WebSocketError", "UnexpectedEndOfExecution"]);
    expect(execution.error?.name).toBe("UnexpectedEndOfExecution");
  });

  it("refuses languages other than python", async () => {
    await expect(sandbox().runCode("console.log(1)", { language: "js" })).rejects.toMatchObject({ name: "SandboxError" });
  });

  it("shares the sandbox with commands and files", async () => {
    await sandbox().runCode("open('/home/user/from-python.txt', 'w').write('written by python')");
    expect(await sandbox().files.read("/home/user/from-python.txt")).toBe("written by python");
    const subprocess = await sandbox().runCode("import subprocess\nsubprocess.run(['echo', 'from subprocess'])\n'done'");
    expect(subprocess.text).toBe("done");
    expect(subprocess.logs.stdout.join("")).toBe("from subprocess\n");
    const fileDescriptorLevel = await sandbox().runCode("import os\nos.write(2, b'raw stderr\\n')\nos.system('echo from shell')");
    expect(fileDescriptorLevel.logs.stderr.join("")).toBe("raw stderr\n");
    expect(fileDescriptorLevel.logs.stdout.join("")).toBe("from shell\n");
    expect(fileDescriptorLevel.text).toBe("0");
  });
});
