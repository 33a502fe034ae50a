import { spawnSync } from "node:child_process";
import { existsSync, readdirSync } from "node:fs";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type CodeRequest, runPythonOneShot } from "../src/adapter.ts";
import { PYTHON_ONE_SHOT_WRAPPER } from "../src/sandbox/python-one-shot.ts";
import { createHostProcessDriver } from "./support/host-process-driver.ts";

const hasPython = spawnSync("python3", ["--version"]).status === 0;
let directory: string;

beforeAll(async () => {
  directory = await mkdtemp(join(tmpdir(), "sbx-core-python-"));
});
afterAll(async () => {
  await rm(directory, { recursive: true, force: true });
});

/** Runs the wrapper with host python3, code on stdin, and returns what it produced. */
async function runWrapper(code: string) {
  const errorPath = join(directory, `error-${Math.random().toString(36).slice(2)}.json`);
  const result = spawnSync("python3", ["-c", PYTHON_ONE_SHOT_WRAPPER, errorPath], { input: code, encoding: "utf8", cwd: directory });
  // The wrapper creates the channel empty before the code runs; it holds JSON only when the code raised.
  const errorText = existsSync(errorPath) ? await readFile(errorPath, "utf8") : "";
  const errorJson = errorText ? JSON.parse(errorText) : null;
  return { exitCode: result.status, stdout: result.stdout, stderr: result.stderr, errorJson };
}

describe.skipIf(!hasPython)("PYTHON_ONE_SHOT_WRAPPER with host python3", () => {
  it("runs code from stdin as __main__ and leaves stdout exactly as the code wrote it", async () => {
    const run = await runWrapper('import sys\nprint("hello")\nprint(__name__, sys.argv)\nsys.stdout.write("no newline")');
    expect(run).toMatchObject({ exitCode: 0, stdout: "hello\n__main__ ['<code>']\nno newline", stderr: "", errorJson: null });
  });

  it("an exception writes name, value and traceback to the error file, the traceback to stderr, and leaves stdout untouched", async () => {
    const run = await runWrapper('print("before")\ndef f():\n    return 1 / 0\nf()\n');
    expect(run.exitCode).toBe(1);
    expect(run.stdout).toBe("before\n");
    expect(run.errorJson).toMatchObject({ name: "ZeroDivisionError", value: "division by zero" });
    expect(run.errorJson.traceback).toContain('File "<code>", line 4');
    expect(run.errorJson.traceback).toContain("ZeroDivisionError: division by zero");
    expect(run.errorJson.traceback).not.toContain("<string>");
    expect(run.stderr).toBe(run.errorJson.traceback);
  });

  it("output that looks like an error is not parsed: printing JSON is just stdout", async () => {
    const run = await runWrapper('print(\'{"name": "ValueError", "value": "fake", "traceback": ""}\')');
    expect(run.exitCode).toBe(0);
    expect(run.errorJson).toBeNull();
  });

  it("a syntax error is reported with name SyntaxError", async () => {
    const run = await runWrapper("def broken(:\n");
    expect(run.exitCode).toBe(1);
    expect(run.errorJson.name).toBe("SyntaxError");
    expect(run.stdout).toBe("");
  });

  it("sys.exit(0) and sys.exit() are success with no error; sys.exit(2) is an error", async () => {
    expect((await runWrapper('print("x")\nimport sys\nsys.exit(0)')).errorJson).toBeNull();
    expect((await runWrapper("import sys\nsys.exit()")).exitCode).toBe(0);
    const failed = await runWrapper("import sys\nsys.exit(2)");
    expect(failed.exitCode).toBe(1);
    expect(failed.errorJson).toMatchObject({ name: "SystemExit", value: "2" });
  });

  it("an exception whose str() fails is still reported", async () => {
    const run = await runWrapper("class Odd(Exception):\n    def __str__(self):\n        raise RuntimeError('no')\nraise Odd()\n");
    expect(run.exitCode).toBe(1);
    expect(run.errorJson).toMatchObject({ name: "Odd" });
  });

  it("non-ASCII output and messages survive", async () => {
    const run = await runWrapper('print("héllo €")\nraise ValueError("naïve ✓")');
    expect(run.stdout).toBe("héllo €\n");
    expect(run.errorJson.value).toBe("naïve ✓");
  });
});

describe.skipIf(!hasPython)("runPythonOneShot over a driver's spawn", () => {
  function request(code: string, signal = new AbortController().signal): CodeRequest & { stdout: string[]; stderr: string[] } {
    const stdout: string[] = [];
    const stderr: string[] = [];
    return {
      code,
      language: "python",
      env: { SBX_TEST_VARIABLE: "from-env" },
      cwd: directory,
      signal,
      onStdout: (text) => stdout.push(text),
      onStderr: (text) => stderr.push(text),
      stdout,
      stderr,
    };
  }

  it("returns error: null and streams stdout for code that succeeds; env and cwd are passed", async () => {
    const driver = createHostProcessDriver(directory);
    const code = request('import os\nprint(os.environ["SBX_TEST_VARIABLE"], os.getcwd())');
    const outcome = await runPythonOneShot(driver, code);
    expect(outcome).toEqual({ error: null, results: null, exitCode: 0, outOfMemoryKilled: null });
    expect(code.stdout.join("")).toBe(`from-env ${directory}\n`);
  });

  it("reads the structured error back through the error channel and removes the error file", async () => {
    const driver = createHostProcessDriver(directory);
    const code = request('print("out")\nraise KeyError("k")');
    const outcome = await runPythonOneShot(driver, code);
    expect(outcome.error).toMatchObject({ name: "KeyError", value: "'k'" });
    expect(outcome.error!.traceback).toContain("KeyError");
    expect(outcome.results).toBeNull();
    expect(code.stdout.join("")).toBe("out\n");
    const errorPath = /\/tmp\/\.sbx-error-[0-9a-f-]+\.json/.exec(driver.commands[0]!)![0];
    expect(existsSync(errorPath)).toBe(false);
    expect(readdirSync("/tmp").filter((name) => name === errorPath.slice(5))).toEqual([]);
  });

  it("an abort kills the run and returns no error", async () => {
    const driver = createHostProcessDriver(directory);
    const controller = new AbortController();
    const code = request("import time\nprint('started', flush=True)\ntime.sleep(60)", controller.signal);
    const running = runPythonOneShot(driver, code);
    setTimeout(() => controller.abort(), 300);
    expect(await running).toEqual({ error: null, results: null });
  });
});
