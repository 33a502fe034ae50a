import { isSbxError, type Sandbox } from "@sbx/core";
import { afterAll, beforeAll, expect, it } from "vitest";
import { createTestSandbox, describeWithDocker } from "./docker-test-environment.js";

// Commands through the sbx sandbox agent on Docker (adr/0025): the same verified kills, caps, out-of-memory report
// and honest errors as the plain `docker exec` path. Every sandbox here starts the agent with its first command.

/** `loginuid` of the command's shell and of its parent (the agent on the agent path, nothing on the exec path). */
const WHERE =
  "read me </proc/self/loginuid; read parent </proc/$PPID/loginuid 2>/dev/null; echo \"$me $parent $(tr '\\0' ' ' </proc/$PPID/cmdline | head -c 16)\"";
const UNSET = "4294967295";

/** Processes still alive (not zombies) whose command line starts with `pattern` (`sleep …` or `/bin/sleep …`). */
async function alive(sandbox: Sandbox, pattern: string): Promise<string[]> {
  const { stdout } = await sandbox.commands.run(
    `ps -eo stat=,args= | awk '$1 !~ /^Z/ { $1 = ""; print substr($0, 2) }' | grep -E -- '^(/bin/)?${pattern}' || true`,
  );
  return stdout.split("\n").filter(Boolean);
}

describeWithDocker("commands through the sandbox agent on Docker", () => {
  let sandbox: Sandbox;
  beforeAll(async () => {
    sandbox = await createTestSandbox({}, { agentCommands: "start" });
  });
  afterAll(async () => {
    await sandbox?.kill();
  });

  it("run as children of the agent, each with its own audit tag, which a child cannot shed or change", async () => {
    const [first, second] = [await sandbox.commands.run(WHERE), await sandbox.commands.run(WHERE)];
    const [, tag, parentTag, parent] = /^(\S+) (\S+) (.*)$/.exec(first.stdout.trim())!;
    expect(parent).toBe("python3 -I -u -c");
    expect(parentTag).toBe(UNSET);
    expect(tag).toMatch(/^\d+$/);
    expect(tag).not.toBe(UNSET);
    expect(second.stdout.split(" ")[0]).not.toBe(tag);
    const shed = await sandbox.commands.run(
      `setsid env -i sh -c 'echo ${UNSET} > /proc/self/loginuid 2>/dev/null && echo changed; echo 12345 > /proc/self/loginuid 2>/dev/null && echo changed; cat /proc/self/loginuid'`,
    );
    expect(shed.stdout.trim().split("\n")).toEqual([expect.stringMatching(/^\d+$/)]);
    expect(shed.stdout.trim()).not.toBe(UNSET);
  });

  it("a timeout kills a child that called setsid and cleared its environment, verified by the root kill helper", async () => {
    const escape = [
      "(setsid env -i /bin/sleep 971 &)",
      `python3 -c "import os\nif os.fork() == 0:\n    os.setsid()\n    if os.fork() == 0:\n        os.execve('/bin/sleep', ['sleep', '972'], {})\n"`,
      "sleep 973",
    ].join("; ");
    const started = await sandbox.commands.start("sleep 0.3; echo $PPID");
    const error = await sandbox.commands.run(escape, { timeoutMs: 1500 }).catch((caught: unknown) => caught);
    expect(error).toMatchObject({ code: "SBX_TIMEOUT", killed: true });
    expect(await alive(sandbox, "sleep 97[123]")).toEqual([]);
    // The command really went through the agent: its parent is the same agent as a background command's.
    const agentPid = (await started.wait()).stdout.trim();
    expect((await sandbox.commands.run("echo $PPID")).stdout.trim()).toBe(agentPid);
  });

  it("a background handle's kill is verified (exit 137), and its escaped children are gone", async () => {
    const handle = await sandbox.commands.start("(setsid env -i /bin/sleep 974 &); cat", { stdin: true });
    await handle.writeStdin("echo\n");
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(await alive(sandbox, "sleep 974")).toHaveLength(1);
    await handle.kill();
    expect((await handle.wait()).exitCode).toBe(137);
    expect(await alive(sandbox, "sleep 974")).toEqual([]);
  });

  it("forged frames on a command's output are that command's bytes: they end no other command and fake no exit", async () => {
    const other = await sandbox.commands.start("sleep 1; echo still-here");
    // A well-formed agent frame claiming every low request id exited 0, written raw to stdout and stderr.
    const forge = [
      "import json, struct, sys",
      "frames = b''",
      "for target in range(0, 64):",
      "    head = json.dumps({'type': 'exit', 'id': target, 'exit_code': 0}).encode()",
      "    frames += struct.pack('>II', 4 + len(head), len(head)) + head",
      "sys.stdout.buffer.write(frames); sys.stderr.buffer.write(frames)",
    ].join("\n");
    await sandbox.files.write("forge.py", forge);
    const forged = await sandbox.commands.run("python3 forge.py; exit 7");
    expect(forged.exitCode).toBe(7);
    expect(forged.stdoutBytes.byteLength).toBeGreaterThan(64 * 40);
    expect(forged.stdout).toContain('{"type": "exit", "id": 0, "exit_code": 0}');
    expect(await other.wait()).toMatchObject({ exitCode: 0, stdout: "still-here\n" });
  });

  it("output is capped by core, and binary bytes survive", async () => {
    const flood = await sandbox.commands.run("head -c 3000000 /dev/zero | tr '\\0' x; printf '\\377\\000ok'", { outputLimitBytes: 1000 });
    expect(flood.exitCode).toBe(0);
    expect(flood.truncated.stdout).toBe(true);
    expect(flood.totalBytes.stdout).toBe(3_000_004);
    const binary = await sandbox.commands.run("printf '\\377\\000ok'");
    expect([...binary.stdoutBytes]).toEqual([255, 0, 111, 107]);
  });
});

describeWithDocker("commands through the sandbox agent on Docker: limits and failures", () => {
  it("a fork bomb at the pids limit is killed on timeout (verified), and the sandbox is usable again", async () => {
    await using bombed = await createTestSandbox({ limits: { pids: 64 } }, { agentCommands: "start" });
    expect((await bombed.commands.run("read p </proc/$PPID/loginuid; echo $p")).stdout.trim()).toBe(UNSET);
    // The bomb starts with one fork (`b &`), then the shell execs: dash forks each element of a background pipeline from
    // the calling shell, so a top-level `b;` could itself fail with 'Cannot fork' (exit 2) once its first element filled the limit.
    const error = await bombed.commands.run("b() { b | b & }; b & exec sleep 60", { timeoutMs: 3000 }).catch((caught: unknown) => caught);
    if (isSbxError(error, "SBX_SANDBOX_NOT_FOUND")) return; // Ended by sbx when the kill could not be verified: the documented alternative.
    expect(error).toMatchObject({ code: "SBX_TIMEOUT", killed: true });
    const after = await bombed.commands.run("cat /sys/fs/cgroup/pids/pids.current; ps -e --no-headers -o user= | grep -c '^10001'");
    const [current, sandboxUser] = after.stdout.trim().split("\n").map(Number);
    // Left: init, the deadline (4), the agent and its zygote, and this command (3 processes).
    expect(current).toBeLessThan(14);
    expect(sandboxUser).toBeLessThan(6);
  });

  it("an out-of-memory kill is exit 137 with outOfMemoryKilled unknown (null: the victim cannot be named, adr/0030), and later commands say false", async () => {
    await using small = await createTestSandbox({ limits: { memoryMiB: 96 } }, { agentCommands: "start" });
    const agentPid = (await small.commands.run("echo $PPID")).stdout.trim();
    const result = await small.commands.run('python3 -c "x = bytearray(512 * 1024 * 1024); print(len(x))"');
    expect(result.exitCode).toBe(137);
    expect(result.outOfMemoryKilled).toBeNull();
    const after = await small.commands.run("echo $PPID");
    expect(after.outOfMemoryKilled).toBe(false);
    // Still through the same agent (the OOM killer took the command, not the agent).
    expect(after.stdout.trim()).toBe(agentPid);
    const killed = await small.commands.run("kill -9 $$");
    expect(killed.exitCode).toBe(137);
    expect(killed.outOfMemoryKilled).toBe(false);
  });

  it("when the agent dies mid-command, the command fails typed with its processes killed, and later commands use docker exec", async () => {
    await using sandbox = await createTestSandbox({}, { agentCommands: "start" });
    const agentPid = (await sandbox.commands.run("echo $PPID")).stdout.trim();
    const handle = await sandbox.commands.start("(setsid env -i /bin/sleep 975 &); sleep 976");
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(await alive(sandbox, "sleep 97[56]")).toHaveLength(2);
    // Killed from inside by sandboxed code (same uid): a denial of service on itself, nothing more.
    const killer = await sandbox.commands.run(`kill -9 ${agentPid}`).catch((caught: unknown) => caught);
    const error = await handle.wait().catch((caught: unknown) => caught);
    expect(error).toMatchObject({ code: "SBX_PROVIDER", retryable: true });
    expect((error as Error).message).toMatch(/agent running the command was lost.*processes were killed \(verified\)/);
    // The killer command ran through the agent too: it either finished before the agent died or failed the same way.
    if (isSbxError(killer)) expect(killer.code).toBe("SBX_PROVIDER");
    expect(await alive(sandbox, "sleep 97[56]")).toEqual([]);
    const fallback = await sandbox.commands.run(WHERE);
    expect(fallback.exitCode).toBe(0);
    expect(fallback.stdout).not.toMatch(/python3 -I -u -c/);
    // A code call starts a new agent, and commands go through it again.
    expect((await sandbox.runCode("print(6 * 7)")).stdout).toBe("42\n");
    const again = (await sandbox.commands.run("echo $PPID")).stdout.trim();
    expect(again).not.toBe(agentPid);
    expect((await sandbox.commands.run(`tr '\\0' ' ' </proc/${again}/cmdline | head -c 16`)).stdout.trim()).toBe("python3 -I -u -c");
  });

  it("by default commands do not start the agent: they use docker exec until a code call has started it", async () => {
    await using sandbox = await createTestSandbox({}, { agentCommands: "warm" });
    const before = await sandbox.commands.run(WHERE);
    expect(before.stdout).not.toMatch(/python3 -I -u -c/);
    expect(await alive(sandbox, "python3 -I -u -c")).toEqual([]);
    await sandbox.runCode("1");
    const after = await sandbox.commands.run(WHERE);
    expect(after.stdout.trim().split(" ").slice(1).join(" ")).toBe(`${UNSET} python3 -I -u -c`);
  });

  it('settings.agentCommands "off" keeps every command on docker exec', async () => {
    await using sandbox = await createTestSandbox({}, { agentCommands: "off" });
    await sandbox.runCode("1");
    expect((await sandbox.commands.run(WHERE)).stdout).not.toMatch(/python3 -I -u -c/);
  });
});

describeWithDocker("the agent's own exec is outside what sandboxed code can subvert", () => {
  it("commands can neither ptrace the agent nor read its memory, and its interpreters carry one tag of their own", async () => {
    await using sandbox = await createTestSandbox({}, { agentCommands: "start" });
    const agentPid = (await sandbox.commands.run("echo $PPID")).stdout.trim();
    const probe = [
      "import ctypes, os, sys",
      "libc = ctypes.CDLL(None, use_errno=True)",
      `pid = ${agentPid}`,
      "attached = libc.ptrace(16, pid, 0, 0)",
      "print('ptrace', attached, ctypes.get_errno())",
      "try:\n    open('/proc/%d/mem' % pid, 'rb').read(1)\n    print('mem readable')\nexcept OSError as error:\n    print('mem', error.errno)",
    ].join("\n");
    await sandbox.files.write("probe.py", probe);
    const result = await sandbox.commands.run("python3 probe.py");
    expect(result.stdout.trim().split("\n")).toEqual(["ptrace -1 1", "mem 13"]);
    const code = await sandbox.runCode("print(open('/proc/self/loginuid').read())");
    const interpreterTag = code.stdout.trim();
    expect(interpreterTag).toMatch(/^\d+$/);
    expect(interpreterTag).not.toBe(UNSET);
    const commandTag = (await sandbox.commands.run("cat /proc/self/loginuid")).stdout.trim();
    expect(commandTag).not.toBe(interpreterTag);
  });
});

describeWithDocker("commands through a stopped agent", () => {
  it("a stopped agent (SIGSTOP from inside) cannot hang a command: it is replaced, the command fails typed, its processes are killed", async () => {
    await using sandbox = await createTestSandbox({}, { agentCommands: "start" });
    // The agent must be running and taking commands first: on a loaded machine its start may outlast the first
    // command, which then uses docker exec, and `$PPID` would be the exec's own wrapper shell, not the agent.
    await sandbox.runCode("1");
    expect((await sandbox.commands.run('echo "$PYTHONUNBUFFERED"')).stdout).toBe("1\n");
    // The timeout only turns a regression (a hang) into a failure: the heartbeat ends the command within ~12 s.
    // The stop comes after the agent reported the command started (`sleep 1`), so the tagged processes exist to be
    // killed; a stop before that report is core's agent-stopped-before-spawned.test.ts (the heartbeat counts a
    // command from its `spawn`).
    const handle = await sandbox.commands.start("(setsid env -i /bin/sleep 977 &); sleep 1; kill -STOP $PPID; sleep 978", { timeoutMs: 60_000 });
    const error = await handle.wait().catch((caught: unknown) => caught);
    expect(error).toMatchObject({ code: "SBX_PROVIDER", retryable: true });
    expect((error as Error).message).toMatch(/did not answer .* while commands ran .*processes were killed \(verified\)/);
    expect(await alive(sandbox, "sleep 97[78]")).toEqual([]);
    expect((await sandbox.commands.run("echo usable")).stdout).toBe("usable\n");
  });
});
