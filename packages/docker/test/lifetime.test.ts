import { expect, it } from "vitest";
import { createTestSandbox, describeWithDocker, docker } from "./docker-test-environment.js";

async function gone(id: string): Promise<boolean> {
  try {
    const inspect = await docker.getContainer(id).inspect();
    return !inspect.State.Running;
  } catch (error) {
    return (error as { statusCode?: number }).statusCode === 404;
  }
}

describeWithDocker("a lifetime the sandbox cannot reach", () => {
  it("SIGSTOP, SIGKILL and ptrace on the deadline from inside are refused, and the sandbox still ends on time", async () => {
    const sandbox = await createTestSandbox({ timeoutMs: 6000 });
    const created = Date.now();
    const attack = [
      "for p in $(ps -eo pid= -o user= | awk '$2 == \"root\" { print $1 }'); do",
      '  kill -STOP $p 2>/dev/null && echo "stop: done $p" || echo "stop: refused $p"; kill -KILL $p 2>/dev/null && echo "kill: done $p" || echo "kill: refused $p"',
      "done",
      `python3 - <<'PY'
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
for pid in [int(p) for p in os.listdir('/proc') if p.isdigit()]:
    try:
        uid = os.stat(f'/proc/{pid}').st_uid
    except FileNotFoundError:
        continue
    if uid != 0:
        continue
    result = libc.ptrace(16, pid, None, None)  # PTRACE_ATTACH
    print('ptrace', pid, result, os.strerror(ctypes.get_errno()))
    try:
        open(f'/proc/{pid}/mem', 'rb').read(1)
        print('mem', pid, 'readable')
    except OSError as error:
        print('mem', pid, error.strerror)
PY`,
      "ps -o user=,stat=,args= -p 1; ps -eo user=,stat=,args= | awk '$1 == \"root\"'",
    ].join("\n");
    const result = await sandbox.commands.run(attack);
    // Every root process refused each attack, and none is stopped.
    const roots = result.stdout.split("\n").filter((line) => line.startsWith("root"));
    expect(roots.length).toBeGreaterThanOrEqual(3);
    expect(roots.join("\n")).toMatch(/sleep 6/);
    for (const line of roots) expect(line.split(/\s+/)[1]).not.toMatch(/^T/);
    const ptraceLines = result.stdout.split("\n").filter((line) => line.startsWith("ptrace"));
    expect(ptraceLines.length).toBeGreaterThanOrEqual(3);
    for (const line of ptraceLines) expect(line).toMatch(/ -1 Operation not permitted$/);
    for (const line of result.stdout.split("\n").filter((entry) => entry.startsWith("mem")))
      expect(line).toMatch(/Permission denied|No such process/);
    const refusals = `${result.stdout}\n${result.stderr}`.split("\n").filter((line) => /^(stop|kill):/.test(line));
    expect(refusals.length).toBeGreaterThanOrEqual(6);
    for (const line of refusals) expect(line).toMatch(/^(stop|kill): refused \d+$/);
    // The sandbox ends by itself (the host's own expiry timer fires 2 s after the deadline; this polls the engine).
    let ended = false;
    while (Date.now() - created < 40_000) {
      if (await gone(sandbox.id)) {
        ended = true;
        break;
      }
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
    expect(ended).toBe(true);
    await expect(sandbox.commands.run("echo still-here")).rejects.toMatchObject({ code: "SBX_SANDBOX_NOT_FOUND" });
  });
});
