import { createSandbox, isSbxError } from "@sbx/core";
import { describe, expect, it } from "vitest";
import { createSandboxProvider } from "../src/index.js";

async function errorOf(work: Promise<unknown>): Promise<unknown> {
  try {
    await work;
  } catch (error) {
    return error;
  }
  throw new Error("expected the call to fail");
}

describe("shell state across top-level statements (as in bash)", () => {
  const cases: Array<[script: string, stdout: string]> = [
    ["false; echo rc=$?", "rc=1\n"],
    ["(exit 3); echo rc=$?", "rc=3\n"],
    ["true | false; echo rc=$?", "rc=1\n"],
    ["set -o pipefail; false | true; echo rc=$?", "rc=1\n"],
    ["ls /nonexistent; echo rc=$?", "rc=2\n"],
    ["python3 -c 'import sys; sys.exit(5)'; echo rc=$?", "rc=5\n"],
    ["x=$(false); echo rc=$?", "rc=1\n"],
    ["cd /nonexistent-dir; echo rc=$?", "rc=1\n"],
    ["false\necho rc=$?", "rc=1\n"],
    ["true | false | true\necho ${PIPESTATUS[@]}", "0 1 0\n"],
    ["set -e\necho one\nfalse\necho two", "one\n"],
    ["a=(x y z)\necho ${a[2]} ${#a[@]}", "z 3\n"],
  ];
  it.each(cases)("%j prints %j", async (script, stdout) => {
    await using sandbox = await createSandbox(createSandboxProvider({ preloadPython: false }));
    const result = await sandbox.commands.run(script);
    expect(result.stdout).toBe(stdout);
  });

  it("set -e stops the script with the failing status, and output before it still streams", async () => {
    await using sandbox = await createSandbox(createSandboxProvider({ preloadPython: false }));
    const chunks: string[] = [];
    const result = await sandbox.commands.run("echo first\nsleep 0.2\nset -e\n(exit 4)\necho never", { onStdout: (text) => chunks.push(text) });
    expect(result).toMatchObject({ exitCode: 4, stdout: "first\n" });
    expect(chunks).toEqual(["first\n"]);
  });

  it("a missing cwd is sh's error and exit 126, as on Docker", async () => {
    await using sandbox = await createSandbox(createSandboxProvider({ preloadPython: false }));
    const result = await sandbox.commands.run("pwd", { cwd: "nonexistent-dir" });
    expect(result).toMatchObject({ exitCode: 126, stdout: "", stderr: `sh: 1: cd: can't cd to ${sandbox.workspace}/nonexistent-dir\n` });
  });

  it("nested scripts (bash -c, redirections inside them) are left alone by the streaming transform", async () => {
    await using sandbox = await createSandbox(createSandboxProvider({ preloadPython: false }));
    const result = await sandbox.commands.run("bash -c 'echo inner > inner.txt; echo visible'\ncat inner.txt\nls -a | grep -c sbx-output || true");
    expect(result.stdout).toBe("visible\ninner\n0\n");
  });
});

describe("Python interpreters", () => {
  it("contexts do not share variables, and a run that cannot be interrupted loses only its own context", async () => {
    await using sandbox = await createSandbox(createSandboxProvider());
    const kept = await sandbox.createCodeContext();
    const doomed = await sandbox.createCodeContext();
    await sandbox.runCode("x = 'still here'", { contextId: kept.id });
    await sandbox.runCode("y = 1", { contextId: doomed.id });
    expect((await sandbox.runCode("print(x)", { contextId: doomed.id })).error?.name).toBe("NameError");
    // A long call in C ignores the interrupt, so the context's interpreter is ended.
    const timeout = await errorOf(sandbox.runCode("sum(range(10**12))", { contextId: doomed.id, timeoutMs: 1000 }));
    expect(isSbxError(timeout) && timeout.code).toBe("SBX_TIMEOUT");
    expect((await sandbox.runCode("print(x)", { contextId: kept.id })).stdout).toBe("still here\n");
    const lost = await errorOf(sandbox.runCode("print(y)", { contextId: doomed.id }));
    expect(isSbxError(lost) && lost.code).toBe("SBX_PROVIDER");
    expect((lost as Error).message).toContain(`Code context ${doomed.id} was lost`);
    expect((await sandbox.runCode("print(6 * 7)")).stdout).toBe("42\n");
  });
});
