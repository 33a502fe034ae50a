import { SandboxAbortError } from "@mastra/core/workspace";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SbxMastraSandbox, TIMED_OUT_EXIT_CODE } from "../src/index.js";
import { BACKENDS } from "./backends.js";

describe.for(BACKENDS)("SbxMastraSandbox.executeCommand on $name", (backend) => {
  let sandbox: SbxMastraSandbox;

  beforeAll(async () => {
    if (!backend.usable) return;
    sandbox = new SbxMastraSandbox({ target: backend.target, createOptions: { timeoutMs: 300_000, metadata: { test: "sbx-mastra" } } });
    await sandbox._start();
  });
  afterAll(async () => {
    await sandbox?._destroy();
  });

  it("streams both streams through the callbacks and returns the result; a non-zero exit is a result", async (context) => {
    if (!backend.usable) return context.skip(`${backend.name} is not usable here`);
    const streamed: string[] = [];
    const result = await sandbox.executeCommand("echo out; echo err >&2; exit 4", [], {
      onStdout: (text) => void streamed.push(`out:${text}`),
      onStderr: (text) => void streamed.push(`err:${text}`),
    });
    expect(result).toMatchObject({ success: false, exitCode: 4, stdout: "out\n", stderr: "err\n", command: "echo out; echo err >&2; exit 4" });
    expect(streamed.sort()).toEqual(["err:err\n", "out:out\n"]);
    expect(result.executionTimeMs).toBeGreaterThanOrEqual(0);
  });

  it("quotes args, runs in the workspace or cwd, and passes env and the runtime env overlay", async (context) => {
    if (!backend.usable) return context.skip(`${backend.name} is not usable here`);
    expect(sandbox.workingDirectory).toBe(sandbox.sandbox.workspace);
    const quoted = await sandbox.executeCommand("printf '%s|'", ["a b", "it's", "$HOME", ";ls"]);
    expect(quoted.stdout).toBe("a b|it's|$HOME|;ls|");
    await sandbox.sandbox.files.mkdir("sub");
    expect((await sandbox.executeCommand("pwd")).stdout).toBe(`${sandbox.sandbox.workspace}\n`);
    expect((await sandbox.executeCommand("pwd", [], { cwd: `${sandbox.sandbox.workspace}/sub` })).stdout).toBe(`${sandbox.sandbox.workspace}/sub\n`);
    sandbox.setEnv((environment) => ({ ...environment, FROM_OVERLAY: "overlay", BOTH: "overlay" }));
    const withEnvironment = await sandbox.executeCommand('echo "$FROM_OVERLAY $BOTH $FROM_CALL"', [], {
      env: { BOTH: "call", FROM_CALL: "call", UNSET: undefined },
    });
    expect(withEnvironment.stdout).toBe("overlay call call\n");
  });

  it("keeps the newest maxRetainedBytes of each stream and says how much was dropped", async (context) => {
    if (!backend.usable) return context.skip(`${backend.name} is not usable here`);
    const result = await sandbox.executeCommand("printf 'aaaaaaaaaabbbbbbbbbb'; printf 'cccccccccc' >&2", [], { maxRetainedBytes: 5 });
    expect(result).toMatchObject({
      stdout: "bbbbb",
      stdoutTruncated: true,
      stdoutDroppedBytes: 15,
      stderr: "ccccc",
      stderrTruncated: true,
      stderrDroppedBytes: 5,
    });
  });

  it("stops a command at its timeout and reports timedOut", async (context) => {
    if (!backend.usable) return context.skip(`${backend.name} is not usable here`);
    const result = await sandbox.executeCommand("echo started; sleep 30; echo never", [], { timeout: 1_500 });
    expect(result).toMatchObject({ success: false, exitCode: TIMED_OUT_EXIT_CODE, timedOut: true, killed: true, stdout: "started\n" });
    expect(result.stderr).toBe("\nsbx: the command ran past 1500 ms and was killed");
  });

  it("stops a command on abortSignal with Mastra's SandboxAbortError", async (context) => {
    if (!backend.usable) return context.skip(`${backend.name} is not usable here`);
    const controller = new AbortController();
    const running = sandbox.executeCommand("echo started; sleep 30", [], {
      abortSignal: controller.signal,
      onStdout: () => controller.abort(new Error("the user pressed stop")),
    });
    await expect(running).rejects.toBeInstanceOf(SandboxAbortError);
    expect((await sandbox.executeCommand("echo still usable")).stdout).toBe("still usable\n");
  });

  it("stops a command whose callback rejects, and rejects with that error", async (context) => {
    if (!backend.usable) return context.skip(`${backend.name} is not usable here`);
    const failure = new Error("the stream consumer failed");
    // eslint-disable-next-line @typescript-eslint/no-misused-promises -- Mastra's own execute tool passes async callbacks: the case under test
    const running = sandbox.executeCommand("echo started; sleep 30", [], { onStdout: () => Promise.reject(failure) });
    await expect(running).rejects.toBe(failure);
  });
});
