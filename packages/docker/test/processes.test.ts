import type { Sandbox } from "@sbx/core";
import { afterAll, beforeAll, expect, it } from "vitest";
import { StreamDemuxer } from "../src/stream-demuxer.js";
import { createTestSandbox, describeWithDocker, docker } from "./docker-test-environment.js";

function frame(stream: number, payload: string): Buffer {
  const body = Buffer.from(payload);
  const header = Buffer.alloc(8);
  header[0] = stream;
  header.writeUInt32BE(body.length, 4);
  return Buffer.concat([header, body]);
}

it("the demuxer keeps streams apart, in order, with headers split across reads and trailing bytes kept", () => {
  const events: string[] = [];
  const demuxer = new StreamDemuxer(
    (chunk) => events.push(`out:${Buffer.from(chunk).toString()}`),
    (chunk) => events.push(`err:${Buffer.from(chunk).toString()}`),
  );
  const wire = Buffer.concat([frame(1, "one"), frame(2, "two"), frame(1, ""), frame(1, "three-no-newline")]);
  for (let index = 0; index < wire.length; index += 3) demuxer.push(wire.subarray(index, index + 3));
  const joined = events
    .join("|")
    .replace(/\|out:/g, "\u0000out:")
    .replace(/\|err:/g, "\u0000err:");
  const merged: string[] = [];
  for (const event of joined.split("\u0000")) {
    const last = merged[merged.length - 1];
    if (last && last.slice(0, 4) === event.slice(0, 4)) merged[merged.length - 1] = last + event.slice(4);
    else merged.push(event);
  }
  expect(merged).toEqual(["out:one", "err:two", "out:three-no-newline"]);
  expect(demuxer.incomplete).toBe(false);
});

describeWithDocker("processes", () => {
  let sandbox: Sandbox;
  beforeAll(async () => {
    sandbox = await createTestSandbox();
  });
  afterAll(async () => {
    await sandbox?.kill();
  });

  it("interleaved stdout and stderr with a last line without newline: nothing dropped, streams separate", async () => {
    const result = await sandbox.commands.run("for i in 1 2 3; do printf 'o%s\\n' $i; printf 'e%s\\n' $i >&2; done; printf tail; printf etail >&2");
    expect(result.stdout).toBe("o1\no2\no3\ntail");
    expect(result.stderr).toBe("e1\ne2\ne3\netail");
  });

  it("a missing working directory is the shell's own error on stderr, not engine text on stdout", async () => {
    const result = await sandbox.commands.run("pwd", { cwd: "/no/such/folder" });
    expect(result.exitCode).toBe(126);
    expect(result.stdout).toBe("");
    expect(result.stderr).toMatch(/no\/such\/folder/);
    expect((await sandbox.commands.run("pwd", { cwd: "sub" }).catch(() => undefined))?.exitCode).toBe(126);
    await sandbox.files.mkdir("sub");
    expect((await sandbox.commands.run("pwd", { cwd: "sub" })).stdout).toBe("/workspace/sub\n");
  });

  it("a timeout kills a double-forked child that called setsid again (no process left, checked with ps)", async () => {
    const started = Date.now();
    await expect(
      sandbox.commands.run("(setsid sh -c 'sleep 997 & sleep 998' &) ; (sh -c 'sleep 996 &' &); sleep 999", { timeoutMs: 1500 }),
    ).rejects.toMatchObject({ code: "SBX_TIMEOUT", killed: true });
    expect(Date.now() - started).toBeLessThan(10_000);
    const processes = await sandbox.commands.run("ps -eo pid,pgid,sid,args");
    expect(processes.stdout).not.toMatch(/sleep 99[6-9]/);
  });

  it("a flood of output is capped and host memory stays bounded (chunks streamed, not buffered)", async () => {
    globalThis.gc?.();
    const before = process.memoryUsage().rss;
    let peak = before;
    let streamed = 0;
    const result = await sandbox.commands.run("head -c 400000000 /dev/zero", {
      outputLimitBytes: 1024 * 1024,
      onStdout: (text) => {
        streamed += text.length;
        if (streamed % 50 === 0) peak = Math.max(peak, process.memoryUsage().rss);
      },
    });
    peak = Math.max(peak, process.memoryUsage().rss);
    expect(result.exitCode).toBe(0);
    expect(result.truncated.stdout).toBe(true);
    expect(result.stdoutBytes.byteLength).toBe(1024 * 1024);
    expect(result.totalBytes.stdout).toBe(400_000_000);
    expect(streamed).toBe(400_000_000);
    expect(peak - before).toBeLessThan(200 * 1024 * 1024);
  });

  it("an out-of-memory kill is exit 137 with outOfMemoryKilled unknown (null: the victim cannot be named, adr/0030), and the sandbox stays usable", async () => {
    await using small = await createTestSandbox({ limits: { memoryMiB: 64 } });
    const result = await small.commands.run('python3 -c "x = bytearray(256 * 1024 * 1024); print(len(x))"');
    expect(result.exitCode).toBe(137);
    expect(result.outOfMemoryKilled).toBeNull();
    const after = await small.commands.run("echo alive");
    expect(after.stdout).toBe("alive\n");
    expect(after.outOfMemoryKilled).toBe(false);
    const killed = await small.commands.run("kill -9 $$");
    expect(killed.exitCode).toBe(137);
    expect(killed.outOfMemoryKilled).toBe(false);
  });

  it("a fork bomb is contained by the pids limit; the engine stays responsive and the sandbox usable", async () => {
    await using bombed = await createTestSandbox({ limits: { pids: 64 } });
    // The bomb starts with one fork (`b &`), then the shell execs: dash forks each element of a background pipeline from
    // the calling shell, so a top-level `b;` could itself fail with 'Cannot fork' (exit 2) once its first element filled the limit.
    await expect(bombed.commands.run("b() { b | b & }; b & exec sleep 60", { timeoutMs: 3000 })).rejects.toMatchObject({ code: "SBX_TIMEOUT" });
    const pingStarted = Date.now();
    await docker.ping();
    expect(Date.now() - pingStarted).toBeLessThan(5000);
    const count = await bombed.commands.run("cat /sys/fs/cgroup/pids/pids.max; ps -e --no-headers | wc -l");
    const [max, running] = count.stdout
      .trim()
      .split("\n")
      .map((line) => line.trim());
    expect(max).toBe("64");
    // Init and the deadline (5), the sandbox agent and its zygote when commands go through it (2), this command (3-4).
    expect(Number(running)).toBeLessThan(12);
  });

  it("a background command keeps running after commands.run returns, and a handle kill stops its tree", async () => {
    const handle = await sandbox.commands.start("sleep 994 & sleep 995");
    await new Promise((resolve) => setTimeout(resolve, 300));
    await handle.kill();
    await handle.wait();
    const processes = await sandbox.commands.run("ps -eo args");
    expect(processes.stdout).not.toMatch(/sleep 99[45]/);
  });
});
