import { spawnSync } from "node:child_process";
import { existsSync, readdirSync, writeFileSync } from "node:fs";
import { mkdtemp, rm, symlink } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { isSbxError, type Sandbox } from "../src/index.ts";
import { type SandboxDriverV1, withCodeAgent } from "../src/adapter.ts";
import { AgentFrameDecoder, AgentProtocolViolation, encodeAgentFrame } from "../src/agent/agent-frames.ts";
import { caught } from "./support/caught.ts";
import { sandboxOverAgentDriver } from "./support/host-agent-sandbox.ts";
import { createHostProcessDriver } from "./support/host-process-driver.ts";

const hasPython = spawnSync("python3", ["-c", "import sys; assert sys.version_info >= (3, 8)"]).status === 0;
if (!hasPython) console.warn("\n[sbx] SKIPPING the sandbox agent tests on host python3: no python3 >= 3.8 on PATH\n");

let directory: string;
beforeAll(async () => {
  directory = await mkdtemp(join(tmpdir(), "sbx-core-agent-"));
});
afterAll(async () => {
  await rm(directory, { recursive: true, force: true });
});

/** A sandbox over host processes with the agent attached (the agent runs on the host's python3). */
function hostSandbox(
  base: SandboxDriverV1 = createHostProcessDriver(directory),
  agentOptions: { interruptGraceMs?: number; outputLimitBytes?: number; startTimeoutMs?: number; commands?: "agent" | "driver" } = {},
) {
  const driver = withCodeAgent(base, { backend: "host-agent-test", ...agentOptions });
  const sandbox = sandboxOverAgentDriver(driver);
  return { sandbox, driver };
}

describe("agent frames", () => {
  it("reassemble from arbitrary chunk boundaries, binary bodies intact", () => {
    const body = new Uint8Array([0, 255, 254, 10, 13]);
    const bytes = Buffer.concat([encodeAgentFrame({ type: "stdout", id: 1 }, body), encodeAgentFrame({ type: "done", id: 1, error: null })]);
    const decoder = new AgentFrameDecoder();
    const frames = [];
    for (let index = 0; index < bytes.byteLength; index += 3) frames.push(...decoder.push(bytes.subarray(index, index + 3)));
    expect(frames.map((frame) => frame.header.type)).toEqual(["stdout", "done"]);
    expect([...frames[0]!.body]).toEqual([...body]);
  });

  it("refuse a length past the limit before buffering it", () => {
    const decoder = new AgentFrameDecoder(1024);
    const prefix = Buffer.alloc(8);
    prefix.writeUInt32BE(1_000_000, 0);
    prefix.writeUInt32BE(10, 4);
    expect(() => decoder.push(prefix)).toThrow(AgentProtocolViolation);
  });

  it("refuse a header that is not an object with a type", () => {
    const head = Buffer.from("[1,2]");
    const frame = Buffer.concat([Buffer.from([0, 0, 0, 4 + head.byteLength, 0, 0, 0, head.byteLength]), head]);
    expect(() => new AgentFrameDecoder().push(frame)).toThrow(AgentProtocolViolation);
  });
});

describe.skipIf(!hasPython)("the sbx sandbox agent on host python3", () => {
  let shared: { sandbox: Sandbox; driver: ReturnType<typeof withCodeAgent> };
  beforeAll(() => {
    shared = hostSandbox();
  });
  afterAll(async () => {
    await shared.sandbox.kill();
  });

  it("keeps state in a context and returns the last expression as text/plain", async () => {
    const { sandbox } = shared;
    const context = await sandbox.createCodeContext();
    expect((await sandbox.runCode("x = 40", { contextId: context.id })).results).toEqual([]);
    const next = await sandbox.runCode("x += 2\nx", { contextId: context.id });
    expect(next.error).toBeNull();
    expect(next.results).toEqual([{ isMainResult: true, data: { "text/plain": "42" } }]);
  });

  it("streams output as it happens: the cell sees the host react to its first line before it ends", async () => {
    const { sandbox } = shared;
    const marker = join(directory, "seen-early");
    const code = [
      "import os, time",
      "print('early', flush=True)",
      "for _ in range(400):",
      "    if os.path.exists('seen-early'):",
      "        break",
      "    time.sleep(0.05)",
      "print('late' if os.path.exists('seen-early') else 'the host never saw the first line')",
    ].join("\n");
    let streamed = "";
    const execution = await sandbox.runCode(code, {
      onStdout: (text) => {
        streamed += text;
        if (streamed.includes("early\n")) writeFileSync(marker, "");
      },
    });
    expect(execution.stdout).toBe("early\nlate\n");
    expect(streamed).toBe("early\nlate\n");
  });

  it("maps every _repr_*_ the object has, and display() results in order", async () => {
    const { sandbox } = shared;
    const code = [
      "class Rich:",
      "    def _repr_html_(self): return '<i>h</i>'",
      "    def _repr_markdown_(self): return '*m*'",
      "    def _repr_svg_(self): return '<svg/>'",
      "    def _repr_json_(self): return {'a': 1}",
      "    def _repr_latex_(self): return '$x$'",
      "    def __repr__(self): return 'Rich()'",
      "display(1, 'two')",
      "Rich()",
    ].join("\n");
    const execution = await sandbox.runCode(code);
    expect(execution.error).toBeNull();
    expect(execution.results).toEqual([
      { isMainResult: false, data: { "text/plain": "1" } },
      { isMainResult: false, data: { "text/plain": "'two'" } },
      {
        isMainResult: true,
        data: {
          "text/plain": "Rich()",
          "text/html": "<i>h</i>",
          "text/markdown": "*m*",
          "image/svg+xml": "<svg/>",
          "application/json": '{"a": 1}',
          "text/latex": "$x$",
        },
      },
    ]);
  });

  it("reports errors with name, value and a traceback of the user's frames only", async () => {
    const execution = await shared.sandbox.runCode("def f():\n    raise ValueError('bad value')\nf()");
    expect(execution.error?.name).toBe("ValueError");
    expect(execution.error?.value).toBe("bad value");
    expect(execution.error?.traceback).toContain("raise ValueError('bad value')");
    expect(execution.error?.traceback).not.toContain('File "<string>"');
    expect(execution.stderr).toContain("ValueError: bad value");
  });

  it("interrupts a runaway cell on timeout and keeps the context's state", async () => {
    const { sandbox } = shared;
    const context = await sandbox.createCodeContext();
    await sandbox.runCode("kept = 7", { contextId: context.id });
    const error = await caught(() => sandbox.runCode("while True:\n    pass", { contextId: context.id, timeoutMs: 500 }));
    expect(isSbxError(error, "SBX_TIMEOUT")).toBe(true);
    expect((await sandbox.runCode("kept", { contextId: context.id })).results?.[0]?.data["text/plain"]).toBe("7");
  });

  it("kills a cell that ignores the interrupt; the context is then reported lost and the others live on", async () => {
    const { sandbox } = hostSandbox(createHostProcessDriver(directory), { interruptGraceMs: 300 });
    try {
      const stubborn = await sandbox.createCodeContext();
      const other = await sandbox.createCodeContext();
      await sandbox.runCode("y = 'other'", { contextId: other.id });
      const timeout = await caught(() =>
        sandbox.runCode("import time\nwhile True:\n    try:\n        time.sleep(0.05)\n    except KeyboardInterrupt:\n        pass", {
          contextId: stubborn.id,
          timeoutMs: 400,
        }),
      );
      expect(isSbxError(timeout, "SBX_TIMEOUT")).toBe(true);
      const lost = await caught(() => sandbox.runCode("1", { contextId: stubborn.id }));
      expect(isSbxError(lost, "SBX_INTERPRETER_LOST")).toBe(true);
      expect((lost as { contextId?: string }).contextId).toBe(stubborn.id);
      expect((await sandbox.runCode("y", { contextId: other.id })).results?.[0]?.data["text/plain"]).toBe("'other'");
    } finally {
      await sandbox.kill();
    }
  });

  it("when the agent dies, in-flight runs fail typed, contexts are lost, and the next call starts a new agent", async () => {
    const { sandbox, driver } = hostSandbox();
    try {
      const context = await sandbox.createCodeContext();
      const firstPid = driver.agent.hello?.pid as number;
      expect(firstPid).toBeGreaterThan(1);
      const inFlight = caught(() => sandbox.runCode("import time\ntime.sleep(30)", { contextId: context.id }));
      await sandbox.runCode(`import os, signal\nos.kill(${firstPid}, signal.SIGKILL)`).catch(() => {});
      const error = await inFlight;
      expect(isSbxError(error, "SBX_INTERPRETER_LOST")).toBe(true);
      expect((error as { contextId?: string }).contextId).toBe(context.id);
      const again = await caught(() => sandbox.runCode("1", { contextId: context.id }));
      expect(isSbxError(again, "SBX_INTERPRETER_LOST")).toBe(true);
      const fresh = await sandbox.runCode("2 + 2");
      expect(fresh.results?.[0]?.data["text/plain"]).toBe("4");
      expect(driver.agent.hello?.pid).not.toBe(firstPid);
    } finally {
      await sandbox.kill();
    }
  });

  it("a stopped agent cannot hang createCodeContext: the call fails typed within its bound and the next one gets a new agent", async () => {
    // 4 s, not 1 s: the bound also covers the replacement agent's start, and a Python start under CI load took longer.
    const { sandbox, driver } = hostSandbox(createHostProcessDriver(directory), { startTimeoutMs: 4000 });
    try {
      await sandbox.runCode("1");
      const stopped = driver.agent.hello?.pid as number;
      process.kill(stopped, "SIGSTOP");
      const error = await caught(() => sandbox.createCodeContext());
      expect(isSbxError(error, "SBX_INTERPRETER_LOST")).toBe(true);
      const context = await sandbox.createCodeContext();
      expect((await sandbox.runCode("'fresh'", { contextId: context.id })).results?.[0]?.data["text/plain"]).toBe("'fresh'");
      expect(driver.agent.hello?.pid).not.toBe(stopped);
    } finally {
      await sandbox.kill();
    }
  });

  it("caps output per run inside the sandbox (the host never receives the flood)", async () => {
    const { sandbox, driver } = hostSandbox(createHostProcessDriver(directory), { outputLimitBytes: 1024 });
    try {
      const execution = await sandbox.runCode("import sys\nfor _ in range(2000):\n    sys.stdout.write('x' * 1000)\nprint()\n'done'");
      expect(execution.stdout).toBe("x".repeat(1024));
      // What was cut inside the sandbox is counted, for core's truncation report.
      const direct = await driver.runCode({
        code: "print('y' * 5000)",
        language: "python",
        env: {},
        cwd: directory,
        onStdout: () => {},
        onStderr: () => {},
        signal: new AbortController().signal,
      });
      expect(direct.droppedBytes).toEqual({ stdout: 5001 - 1024, stderr: 0 });
      expect(execution.results?.[0]?.data["text/plain"]).toBe("'done'");
    } finally {
      await sandbox.kill();
    }
  });

  it("keeps the caller's outputLimitBytes above 16 MiB: the agent applies the run's own limit, no default of its own", async () => {
    const { sandbox } = shared;
    const produced = 17 * 1024 * 1024;
    const code = `import sys\nblock = "z" * 65536\nfor _ in range(${produced / 65536}):\n    sys.stdout.write(block)\n`;
    const kept = await sandbox.runCode(code, { outputLimitBytes: 20 * 1024 * 1024 });
    expect(kept.stdout.length).toBe(produced);
    expect(kept.truncated.stdout).toBe(false);
    // Streaming too: the caller sees all of it and keeps up to its limit.
    let streamed = 0;
    const streaming = await sandbox.runCode(code, { outputLimitBytes: 20 * 1024 * 1024, onStdout: (text) => (streamed += text.length) });
    expect(streamed).toBe(produced);
    expect(streaming.stdout.length).toBe(produced);
    expect(streaming.totalBytes.stdout).toBe(produced);
  });

  it("keeps no more results than core's caps while the run goes on, and counts the rest as dropped", async () => {
    const { sandbox, driver } = shared;
    const execution = await sandbox.runCode("for i in range(300):\n    display(i)", { maxResults: 5 });
    expect(execution.results?.map((result) => result.data["text/plain"])).toEqual(["0", "1", "2", "3", "4"]);
    expect(execution.truncated.results).toBe(true);
    const direct = await driver.runCode({
      code: "for i in range(300):\n    display(i)",
      language: "python",
      env: {},
      cwd: directory,
      onStdout: () => {},
      onStderr: () => {},
      signal: new AbortController().signal,
      resultCaps: { maxResults: 2, limitBytes: 1024 },
    });
    expect(direct.results).toEqual([
      { isMainResult: false, data: { "text/plain": "0" } },
      { isMainResult: false, data: { "text/plain": "1" } },
    ]);
    expect(direct.droppedResults).toBe(298);
  });

  it("an unknown context id is an invalid argument, not a crash", async () => {
    const error = await caught(() => shared.sandbox.runCode("1", { contextId: "ctx-nope" }));
    expect(isSbxError(error, "SBX_INVALID_ARGUMENT")).toBe(true);
  });

  it("without python3 in the sandbox, code calls raise RuntimeMissingError naming python3 and commands still work", async () => {
    const bin = await mkdtemp(join(tmpdir(), "sbx-core-nopython-"));
    await symlink("/bin/sh", join(bin, "sh"));
    const base = createHostProcessDriver(directory);
    const withoutPython: SandboxDriverV1 = { ...base, spawn: (request) => base.spawn({ ...request, env: { ...request.env, PATH: bin } }) };
    const { sandbox } = hostSandbox(withoutPython);
    try {
      const error = await caught(() => sandbox.createCodeContext());
      expect(isSbxError(error, "SBX_RUNTIME_MISSING")).toBe(true);
      expect((error as { runtime?: string }).runtime).toBe("python3");
      expect((error as Error).message).toContain("python3");
      const oneShot = await caught(() => sandbox.runCode("1"));
      expect(isSbxError(oneShot, "SBX_RUNTIME_MISSING")).toBe(true);
      expect((await sandbox.commands.run("echo still-here")).stdout).toBe("still-here\n");
    } finally {
      await sandbox.kill();
      await rm(bin, { recursive: true, force: true });
    }
  });
});

/**
 * Every other Python the machine has (pyenv versions, or SBX_AGENT_PYTHONS=/path/a:/path/b): the agent must work on
 * 3.8 and newer and refuse older ones with exit status 3, which the host reports as RuntimeMissingError.
 */
const pyenvRoot = join(process.env.HOME ?? "/root", ".pyenv", "versions");
const otherPythons = (
  process.env.SBX_AGENT_PYTHONS?.split(":").filter(Boolean) ??
  (existsSync(pyenvRoot)
    ? readdirSync(pyenvRoot)
        .filter((version) => /^3\.\d+\.\d+$/.test(version))
        .map((version) => join(pyenvRoot, version, "bin", "python3"))
    : [])
).filter((path) => existsSync(path));

describe.skipIf(otherPythons.length === 0)("the sandbox agent on every Python version found", () => {
  for (const interpreter of otherPythons) {
    const version = spawnSync(interpreter, ["-c", "import sys; print('%d.%d' % sys.version_info[:2])"], { encoding: "utf8" }).stdout.trim();
    const supported = Number(version.split(".")[0]) === 3 && Number(version.split(".")[1]) >= 8;
    it(`${supported ? "runs" : "refuses to run"} on Python ${version}`, async () => {
      const base = createHostProcessDriver(directory);
      const pinned: SandboxDriverV1 = {
        ...base,
        spawn: (request) => base.spawn({ ...request, command: request.command.replace("exec python3 ", `exec ${interpreter} `) }),
      };
      const { sandbox } = hostSandbox(pinned);
      try {
        if (!supported) {
          const error = await caught(() => sandbox.runCode("1"));
          expect(isSbxError(error, "SBX_RUNTIME_MISSING")).toBe(true);
          expect((error as { runtime?: string }).runtime).toBe("python3 >= 3.8");
          return;
        }
        const context = await sandbox.createCodeContext();
        await sandbox.runCode("class P:\n    def _repr_png_(self): return b'png'\nn = 1", { contextId: context.id });
        const execution = await sandbox.runCode("display(P())\nn + 1", { contextId: context.id });
        expect(execution.results).toEqual([
          { isMainResult: false, data: { "text/plain": expect.stringContaining("P object"), "image/png": Buffer.from("png").toString("base64") } },
          { isMainResult: true, data: { "text/plain": "2" } },
        ]);
        expect((await sandbox.runCode("import sys\nsys.version_info[:2]")).results?.[0]?.data["text/plain"]).toBe(`(${version.replace(".", ", ")})`);
      } finally {
        await sandbox.kill();
      }
    });
  }
});

/** A Python with matplotlib (Debian's python3-matplotlib; .ci/provision.sh installs it), or none. */
const matplotlibPython = [process.env.SBX_AGENT_MATPLOTLIB_PYTHON, "/usr/bin/python3", "python3"]
  .filter((candidate): candidate is string => Boolean(candidate))
  .find((candidate) => spawnSync(candidate, ["-c", "import matplotlib, sys; assert sys.version_info >= (3, 8)"]).status === 0);
if (!matplotlibPython)
  console.warn("\n[sbx] SKIPPING the agent's matplotlib test: no python3 with matplotlib here (apt-get install python3-matplotlib)\n");

describe.skipIf(!matplotlibPython)("the sandbox agent with matplotlib installed", () => {
  it("sends open figures as image/png results, and a figure as the last expression as the main result, once", async () => {
    const base = createHostProcessDriver(directory);
    const pinned: SandboxDriverV1 = {
      ...base,
      spawn: (request) =>
        base.spawn({
          ...request,
          command: request.command.replace("exec python3 ", `exec ${matplotlibPython} `),
          env: { ...request.env, MPLCONFIGDIR: directory },
        }),
    };
    const { sandbox } = hostSandbox(pinned);
    try {
      const context = await sandbox.createCodeContext();
      const plotted = await sandbox.runCode("import matplotlib.pyplot as plt\nplt.plot([1, 2, 3])\nNone", { contextId: context.id });
      expect(plotted.error).toBeNull();
      expect(plotted.results).toHaveLength(1);
      expect(plotted.results![0]!.isMainResult).toBe(false);
      expect(Buffer.from(plotted.results![0]!.data["image/png"]!, "base64").subarray(0, 8)).toEqual(
        Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
      );
      const figure = await sandbox.runCode("figure = plt.figure()\nplt.bar([1], [2])\nfigure", { contextId: context.id });
      expect(figure.results).toHaveLength(1);
      expect(figure.results![0]!.isMainResult).toBe(true);
      expect(figure.results![0]!.data["image/png"]!.startsWith("iVBORw0KGgo")).toBe(true);
      expect(figure.results![0]!.data["text/plain"]).toContain("Figure");
    } finally {
      await sandbox.kill();
    }
  });
});

describe.skipIf(!hasPython)('commands through the agent (opt-in: commands: "agent")', () => {
  let sandbox: Sandbox;
  let base: ReturnType<typeof createHostProcessDriver>;
  beforeAll(async () => {
    base = createHostProcessDriver(directory);
    sandbox = hostSandbox(base, { commands: "agent" }).sandbox;
    await sandbox.runCode("1"); // the agent runs from now on
  });
  afterAll(async () => {
    await sandbox.kill();
  });

  it("run through the running agent, not a spawn each, with exit codes, both streams and raw bytes", async () => {
    const spawnsBefore = base.commands.length;
    const result = await sandbox.commands.run("printf 'out\\377'; printf err >&2; exit 3");
    expect(result.exitCode).toBe(3);
    expect([...result.stdoutBytes]).toEqual([...Buffer.from("out\xff", "latin1")]);
    expect(result.stderr).toBe("err");
    expect(base.commands.length).toBe(spawnsBefore);
  });

  it("take stdin, keep a missing cwd sh's own error (126), and report a signal as 128 + N", async () => {
    expect((await sandbox.commands.run("cat", { stdin: "piped" })).stdout).toBe("piped");
    expect((await sandbox.commands.run("true", { cwd: join(directory, "missing") })).exitCode).toBe(126);
    expect((await sandbox.commands.run("kill -TERM $$")).exitCode).toBe(143);
  });

  it("end when the command exits even if a background child holds stdout", async () => {
    const result = await sandbox.commands.run("sleep 30 & echo done");
    expect(result.stdout).toBe("done\n");
    expect(result.exitCode).toBe(0);
  });

  it("kill the whole process group on timeout, and the background handle's kill resolves once it is gone", async () => {
    const marker = `sbx-agent-kill-${Date.now()}`;
    const error = await caught(() => sandbox.commands.run(`sh -c 'sleep 60; echo ${marker}' & sleep 60`, { timeoutMs: 300 }));
    expect(isSbxError(error, "SBX_TIMEOUT")).toBe(true);
    expect(spawnSync("pgrep", ["-f", `echo ${marker}`]).status).toBe(1);
    const handle = await sandbox.commands.start("cat", { stdin: true });
    await handle.writeStdin("streamed\n");
    let seen = "";
    for await (const text of handle.stdout) {
      seen += text;
      if (seen.includes("streamed")) break;
    }
    await handle.kill();
    expect((await handle.wait()).exitCode).toBe(137);
  });
});
