import { isSbxError, type Sandbox } from "@sbx/core";
import { afterAll, beforeAll, expect, it } from "vitest";
import { createTestSandbox, describeWithDocker } from "./docker-test-environment.js";

/** Every process of the sandbox, as `user args` lines (ps runs as the sandbox user but sees all). */
async function processes(sandbox: Sandbox): Promise<string> {
  return (await sandbox.commands.run("ps -eo user:12,args --no-headers")).stdout;
}

describeWithDocker("verified kills: attacks on the kill", () => {
  let sandbox: Sandbox;
  beforeAll(async () => {
    sandbox = await createTestSandbox();
  });
  afterAll(async () => {
    await sandbox?.kill();
  });

  it("a child that calls setsid and clears its environment (env -i, python os.execve with {}) is killed by a timeout", async () => {
    const escape = [
      "(setsid env -i /bin/sleep 981 &)",
      `python3 -c "import os\nif os.fork() == 0:\n    os.setsid()\n    if os.fork() == 0:\n        os.execve('/bin/sleep', ['sleep', '982'], {})\n"`,
      "sleep 999",
    ].join("; ");
    await expect(sandbox.commands.run(escape, { timeoutMs: 1500 })).rejects.toMatchObject({ code: "SBX_TIMEOUT" });
    const left = await processes(sandbox);
    expect(left).not.toMatch(/sleep 98[12]|sleep 999/);
  });

  it("a command whose child is held between vfork and exec (its parent waits uninterruptibly) is killed, verified", async () => {
    // glibc's posix_spawn is a vfork: the parent sleeps in D until the child execs, and this child first blocks opening
    // a FIFO nobody writes. dash runs every external command the same way, so a shell loop is in this state at random;
    // the kill's stop phase once waited for the parent to show T, which it never does, and gave up (exit 3).
    const spawnHeld = [
      "import os",
      "fifo = '/tmp/held-' + str(os.getpid())",
      "os.mkfifo(fifo)",
      "os.posix_spawn('/bin/sleep', ['sleep', '985'], dict(os.environ), file_actions=[(os.POSIX_SPAWN_OPEN, 0, fifo, os.O_RDONLY, 0)])",
    ].join("\n");
    const started = await sandbox.commands.start(`python3 -c "${spawnHeld}"`, { timeoutMs: 60_000 });
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const states = (await sandbox.commands.run("ps -eo stat,args --no-headers")).stdout;
    expect(states).toMatch(/^D\S* +python3 -c import os/m);
    await started.kill();
    expect((await started.wait()).exitCode).toBe(137);
    expect(await processes(sandbox)).not.toMatch(/python3 -c import os/);
    expect((await sandbox.commands.run("echo usable")).stdout).toBe("usable\n");
  });

  it("an escaped watcher that kills the kill helper cannot stop the kill, and later timeouts still work", async () => {
    // The watcher leaves the session and clears its environment, then kills anything named like sbx's kill helper.
    const watcher = "(setsid env -i sh -c 'while :; do pkill -9 -f sbx-kil[l]; done' >/dev/null 2>&1 &); sleep 983";
    const started = await sandbox.commands.start(watcher);
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(await processes(sandbox)).toMatch(/while :; do pkill -9 -f sbx-kil\[l\]/);
    await started.kill();
    expect((await started.wait()).exitCode).toBe(137);
    const left = await processes(sandbox);
    expect(left).not.toMatch(/pkill|sleep 983|while :/);
    // A later timeout works: nothing was left to sabotage it.
    await expect(sandbox.commands.run("sleep 984", { timeoutMs: 1000 })).rejects.toMatchObject({ code: "SBX_TIMEOUT" });
    expect(await processes(sandbox)).not.toMatch(/sleep 984/);
    expect((await sandbox.commands.run("echo usable")).stdout).toBe("usable\n");
  });
});

describeWithDocker("verified kills: a foreground fork bomb at the pids limit", () => {
  it("is killed after its timeout; the sandbox is usable again with its processes gone (or reported lost)", async () => {
    await using bombed = await createTestSandbox({ limits: { pids: 64 } });
    // The bomb starts with one fork (`b &`), then the shell execs: dash forks each element of a background pipeline from
    // the calling shell, so a top-level `b;` could itself fail with 'Cannot fork' (exit 2) once its first element filled the limit.
    await expect(bombed.commands.run("b() { b | b & }; b & exec sleep 60", { timeoutMs: 3000 })).rejects.toMatchObject({ code: "SBX_TIMEOUT" });
    const after = await bombed.commands.run("cat /sys/fs/cgroup/pids/pids.current; ps -e --no-headers | wc -l").catch((error: unknown) => error);
    if (isSbxError(after, "SBX_SANDBOX_NOT_FOUND")) return; // Reported lost: the documented alternative.
    const [current, running] = (after as { stdout: string }).stdout
      .trim()
      .split("\n")
      .map((line) => Number(line.trim()));
    // Init and the deadline (5), the sandbox agent and its zygote when commands go through it (2), this command (3-4).
    expect(current).toBeLessThan(12);
    expect(running).toBeLessThan(12);
  });
});
