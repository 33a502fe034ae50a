import { isSbxError, type Sandbox } from "@sbx/core";
import { afterAll, beforeAll, expect, it } from "vitest";
import { agentProcessesOf, forgetAgentProcesses } from "../src/untagged-process-check.js";
import { createTestSandbox, describeWithDocker, docker, TEST_IMAGE } from "./docker-test-environment.js";

/** An image without python3, made offline from the test image (docker commit after removing the interpreter). */
const NO_PYTHON_IMAGE = "sbx-test/no-python:agent";

async function ensureNoPythonImage(): Promise<void> {
  if (
    await docker
      .getImage(NO_PYTHON_IMAGE)
      .inspect()
      .then(
        () => true,
        () => false,
      )
  )
    return;
  const container = await docker.createContainer({
    Image: TEST_IMAGE,
    Entrypoint: ["sh", "-c", "rm -f /usr/bin/python3 /usr/bin/python3.*"],
    Cmd: [],
    User: "0:0",
    Labels: { "sbx.test": "agent-no-python" },
  });
  try {
    await container.start();
    await container.wait();
    const [repo, tag] = NO_PYTHON_IMAGE.split(":");
    await container.commit({ repo, tag });
  } finally {
    await container.remove({ force: true }).catch(() => {});
  }
}

/**
 * Python run as a command (the sandbox user, outside the agent) that finds the agent's processes: those running
 * `python3 -I -u -c <agent source>` (agent, zygote, interpreters); the agent is the one whose parent is not one of them.
 */
const FIND_AGENT = [
  "import json, os",
  "def cmdline(p):",
  "    try:",
  "        return open('/proc/%s/cmdline' % p, 'rb').read().split(b'\\0')",
  "    except OSError:",
  "        return []",
  "def parent(p):",
  "    return open('/proc/%s/stat' % p).read().rsplit(')', 1)[1].split()[1]",
  "family = [p for p in os.listdir('/proc') if p.isdigit() and cmdline(p)[1:4] == [b'-I', b'-u', b'-c'] and b'PROTOCOL = 1' in cmdline(p)[4]]",
  "print(json.dumps({'agent': [p for p in family if parent(p) not in family], 'family': family}))",
].join("\n");

async function findAgent(sandbox: Sandbox): Promise<{ agent: string[]; family: string[] }> {
  await sandbox.files.write(".find-agent.py", FIND_AGENT);
  const found = await sandbox.commands.run("python3 .find-agent.py; rm -f .find-agent.py");
  return JSON.parse(found.stdout) as { agent: string[]; family: string[] };
}

/** The agent's pid(s): exactly one while it runs. */
async function agentPids(sandbox: Sandbox): Promise<string[]> {
  return (await findAgent(sandbox)).agent;
}

/** Every process of the sandbox running the agent's source (agent, zygote, interpreters). */
async function agentFamily(sandbox: Sandbox): Promise<string[]> {
  return (await findAgent(sandbox)).family;
}

describeWithDocker("the sbx sandbox agent on Docker: threat model (attacks from inside the sandbox)", () => {
  let sandbox: Sandbox;
  beforeAll(async () => {
    // The attacks run as plain `docker exec` commands (agent-path commands attacking their own agent: agent-commands.test.ts).
    sandbox = await createTestSandbox({ metadata: { test: "agent-threats" } }, { agentCommands: "off" });
  });
  afterAll(async () => {
    await sandbox?.kill();
  });

  it("ptrace, memory, environ and /proc/<pid>/fd of the agent and of other contexts are refused to sandboxed code", async () => {
    const victim = await sandbox.createCodeContext();
    expect((await sandbox.runCode("secret = 'sbx-victim-secret'", { contextId: victim.id })).error).toBeNull();
    const attacker = await sandbox.createCodeContext();
    const family = await agentFamily(sandbox);
    expect(family.length).toBeGreaterThanOrEqual(4); // agent, zygote, two interpreters
    expect(await agentPids(sandbox)).toHaveLength(1);
    const attack = [
      "import ctypes, json, os",
      "libc = ctypes.CDLL(None, use_errno=True)",
      `targets = [p for p in ${JSON.stringify(family)} if int(p) != os.getpid()]`,
      "outcome = {}",
      "for pid in targets:",
      "    r = {'ptrace': libc.ptrace(16, int(pid), 0, 0) == 0}",
      "    for name, path, mode in (('mem', '/proc/%s/mem', 'rb'), ('environ', '/proc/%s/environ', 'rb'), ('stdout', '/proc/%s/fd/1', 'wb'), ('stdin', '/proc/%s/fd/0', 'rb')):",
      "        try:",
      "            with open(path % pid, mode) as handle:",
      "                r[name] = True",
      "        except OSError:",
      "            r[name] = False",
      "    outcome[pid] = r",
      "print(json.dumps(outcome))",
    ].join("\n");
    const result = await sandbox.runCode(attack, { contextId: attacker.id });
    expect(result.error).toBeNull();
    const outcome = JSON.parse(result.stdout) as Record<string, Record<string, boolean>>;
    expect(Object.keys(outcome).length).toBe(family.length - 1);
    for (const access of Object.values(outcome)) expect(access).toEqual({ ptrace: false, mem: false, environ: false, stdout: false, stdin: false });
    // The same attack as a plain command (outside any interpreter) gets no further.
    const asCommand = await sandbox.commands.run(
      `for p in ${family.join(" ")}; do cat /proc/$p/environ >/dev/null 2>&1 && echo readable $p; done; echo end`,
    );
    expect(asCommand.stdout).toBe("end\n");
    expect((await sandbox.runCode("secret", { contextId: victim.id })).results?.[0]?.data["text/plain"]).toBe("'sbx-victim-secret'");
  });

  it("forged frames written to every descriptor a context holds reach no other context and do not confuse the agent", async () => {
    const honest = await sandbox.createCodeContext();
    await sandbox.runCode("value = 'honest'", { contextId: honest.id });
    const forger = await sandbox.createCodeContext();
    const [agentBefore] = await agentPids(sandbox);
    const forge = [
      "import json, os, struct",
      "def frame(header):",
      "    head = json.dumps(header).encode()",
      "    return struct.pack('>II', 4 + len(head), len(head)) + head",
      "forged = b''.join(frame(h) for h in [",
      "    {'type': 'result', 'main': True, 'data': {'text/plain': 'forged'}},",
      "    {'type': 'done', 'error': None},",
      "    {'type': 'result', 'id': 1, 'main': True, 'data': {'text/plain': 'forged'}},",
      "    {'type': 'done', 'id': 1, 'status': 'ok', 'error': None, 'lost': None},",
      "    {'type': 'context_lost', 'context': 'any'},",
      "]) + b'\\xff\\xff\\xff\\xffgarbage'",
      "for fd in [int(n) for n in os.listdir('/proc/self/fd')]:",
      "    try:",
      "        os.write(fd, forged)",
      "    except OSError:",
      "        pass",
    ].join("\n");
    await sandbox.runCode(forge, { contextId: forger.id }).catch((error: unknown) => {
      // The forger may lose its own interpreter (the agent kills an interpreter that breaks the protocol): its problem.
      expect(isSbxError(error, "SBX_INTERPRETER_LOST")).toBe(true);
    });
    const checked = await sandbox.runCode("value", { contextId: honest.id });
    expect(checked.results).toEqual([{ isMainResult: true, data: { "text/plain": "'honest'" } }]);
    const oneShot = await sandbox.runCode("6 * 7");
    expect(oneShot.results).toEqual([{ isMainResult: true, data: { "text/plain": "42" } }]);
    expect(await agentPids(sandbox)).toEqual([agentBefore]);
  });

  it("the agent has no file to overwrite, and the interpreter it runs cannot be replaced", async () => {
    await sandbox.runCode("1");
    const replace = await sandbox.commands.run("cp /bin/sh /usr/bin/python3 2>&1; echo $?; ls -A /tmp; ls -A .");
    const [status, ...listing] = replace.stdout.trim().split("\n");
    expect(Number(status)).not.toBe(0);
    expect(listing.filter((name) => /sbx|agent/i.test(name) && !name.startsWith(".sbx-"))).toEqual([]);
    expect((await sandbox.runCode("'still' + ' genuine'")).results?.[0]?.data["text/plain"]).toBe("'still genuine'");
  });

  it("killing the agent from inside fails in-flight runs typed, reports contexts lost, and the next call starts a new agent", async () => {
    const context = await sandbox.createCodeContext();
    await sandbox.runCode("x = 1", { contextId: context.id });
    const [agent] = await agentPids(sandbox);
    const inFlight = sandbox.runCode("import time\ntime.sleep(60)", { contextId: context.id }).then(
      () => undefined,
      (error: unknown) => error,
    );
    await sandbox.commands.run(`kill -9 ${agent}`);
    const error = await inFlight;
    expect(isSbxError(error, "SBX_INTERPRETER_LOST")).toBe(true);
    expect((error as { contextId?: string }).contextId).toBe(context.id);
    const later = await sandbox.runCode("x", { contextId: context.id }).then(
      () => undefined,
      (failure: unknown) => failure,
    );
    expect(isSbxError(later, "SBX_INTERPRETER_LOST")).toBe(true);
    expect((await sandbox.runCode("1 + 1")).results?.[0]?.data["text/plain"]).toBe("2");
    const [next] = await agentPids(sandbox);
    expect(next).not.toBe(agent);
    // Nothing of the old agent is left: its zygote and interpreters ended with it.
    expect((await agentFamily(sandbox)).filter((pid) => pid === agent)).toEqual([]);
  });

  it("a stopped agent (SIGSTOP from inside) cannot stretch a timeout: the run times out and the agent is replaced", async () => {
    const context = await sandbox.createCodeContext();
    const [agent] = await agentPids(sandbox);
    await sandbox.commands.run(`kill -STOP ${agent}`);
    const error = await sandbox.runCode("1", { contextId: context.id, timeoutMs: 1000 }).then(
      () => undefined,
      (failure: unknown) => failure,
    );
    expect(isSbxError(error, "SBX_TIMEOUT")).toBe(true);
    expect((await sandbox.runCode("3 * 3")).results?.[0]?.data["text/plain"]).toBe("9");
    const [next] = await agentPids(sandbox);
    expect(next).not.toBe(agent);
    const old = await sandbox.commands.run(`test -d /proc/${agent} && echo alive || echo gone`);
    expect(old.stdout).toBe("gone\n");
  });
});

describeWithDocker("the sbx sandbox agent on Docker: robustness", () => {
  it("an image without python3 gives RuntimeMissingError naming python3 on code calls, and commands still work", async () => {
    await ensureNoPythonImage();
    await using sandbox = await createTestSandbox({ metadata: { test: "agent-no-python" } }, { image: NO_PYTHON_IMAGE });
    for (const call of [() => sandbox.runCode("1"), () => sandbox.createCodeContext()]) {
      const error = await call().then(
        () => undefined,
        (failure: unknown) => failure,
      );
      expect(isSbxError(error, "SBX_RUNTIME_MISSING")).toBe(true);
      expect((error as { runtime?: string }).runtime).toBe("python3");
    }
    const command = await sandbox.commands.run("echo works; command -v python3 || echo no-python3");
    expect(command.stdout).toBe("works\nno-python3\n");
  });

  it("100 contexts keep their own state, and 100 one-shot runs leave no process behind", async () => {
    await using sandbox = await createTestSandbox({ metadata: { test: "agent-100" }, limits: { memoryMiB: 1024, pids: 512 } });
    const contexts = [];
    for (let index = 0; index < 100; index++) contexts.push(await sandbox.createCodeContext());
    for (const [index, context] of contexts.entries()) await sandbox.runCode(`mine = ${index}`, { contextId: context.id });
    for (const [index, context] of contexts.entries()) {
      expect((await sandbox.runCode("mine", { contextId: context.id })).results?.[0]?.data["text/plain"]).toBe(String(index));
    }
    expect((await agentFamily(sandbox)).length).toBe(102); // agent, zygote, 100 interpreters
    const rssBefore = process.memoryUsage().rss;
    for (let index = 0; index < 100; index++)
      expect((await sandbox.runCode(`${index} + 1`)).results?.[0]?.data["text/plain"]).toBe(String(index + 1));
    // Every one-shot interpreter is gone and reaped: the same 102 processes, and no zombie anywhere.
    expect((await agentFamily(sandbox)).length).toBe(102);
    expect((await sandbox.commands.run("ps -eo stat= | grep -c '^Z' || true")).stdout.trim()).toBe("0");
    expect(process.memoryUsage().rss - rssBefore).toBeLessThan(64 * 1024 * 1024);
  });

  it("a context that runs out of memory reports it on that run, is lost afterwards, saying so, and the other contexts live on", async () => {
    await using sandbox = await createTestSandbox({ metadata: { test: "agent-oom" }, limits: { memoryMiB: 256 } });
    const hungry = await sandbox.createCodeContext();
    const other = await sandbox.createCodeContext();
    await sandbox.runCode("keep = 'kept'", { contextId: other.id });
    // The run killed for memory is a result that cannot pass for success (like a command's exit 137)...
    const killed = await sandbox.runCode("hog = bytearray(1024 * 1024 * 1024)", { contextId: hungry.id });
    expect(killed.outOfMemoryKilled).toBe(true);
    expect(killed.error?.name).toBe("OutOfMemoryError");
    // ...and the context's interpreter is gone: its next call says why.
    const error = await sandbox.runCode("1", { contextId: hungry.id }).then(
      () => undefined,
      (failure: unknown) => failure,
    );
    expect(isSbxError(error, "SBX_INTERPRETER_LOST")).toBe(true);
    expect((error as { reason?: string }).reason).toContain("out-of-memory");
    expect((await sandbox.runCode("keep", { contextId: other.id })).results?.[0]?.data["text/plain"]).toBe("'kept'");
  });

  it("a flood from runCode is cut inside the sandbox at the output limit", async () => {
    await using sandbox = await createTestSandbox({ metadata: { test: "agent-flood" } });
    const execution = await sandbox.runCode("import sys\nchunk = 'y' * 65536\nfor _ in range(4096):\n    sys.stdout.write(chunk)\n'flooded'");
    expect(execution.stdout.length).toBe(16 * 1024 * 1024);
    expect(execution.results?.[0]?.data["text/plain"]).toBe("'flooded'");
  });

  it("invalid UTF-8 from code arrives as U+FFFD, never as a broken frame", async () => {
    await using sandbox = await createTestSandbox({ metadata: { test: "agent-bytes" } });
    const execution = await sandbox.runCode(
      "import sys\nsys.stdout.flush()\nsys.stdout.buffer.write(b'a\\xffb\\n') if hasattr(sys.stdout, 'buffer') else None\nimport os\nos.write(1, b'c\\xfe\\n')\n0",
    );
    expect(execution.stdout).toContain("c\uFFFD\n");
    expect(execution.results?.[0]?.data["text/plain"]).toBe("0");
  });
});

describeWithDocker("the agent's entry in the process-wide map of running agents (issue 20)", () => {
  it("names the running agent, and is dropped when its sandbox is destroyed", async () => {
    const sandbox = await createTestSandbox({ metadata: { test: "agent-map" } });
    await sandbox.runCode("1");
    const running = agentProcessesOf(sandbox.id);
    expect([...running].map((entry) => entry.split(":")[0])).toEqual(await agentPids(sandbox));
    await sandbox.kill();
    // A destroyed sandbox's container id no longer has an entry: asking again makes a new, empty one.
    const after = agentProcessesOf(sandbox.id);
    expect(after).not.toBe(running);
    expect(after.size).toBe(0);
    forgetAgentProcesses(sandbox.id);
  });
});
