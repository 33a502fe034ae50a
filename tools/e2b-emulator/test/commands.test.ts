import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { skipDockerTests } from "./docker-availability.js";
import { emulatorForSuite } from "./emulator-fixture.js";
import { sdkVersions } from "./sdk-versions.js";

describe.skipIf(skipDockerTests)("commands (envd process service)", () => {
  const emulator = emulatorForSuite();

  describe.each(sdkVersions)("%s", (_label, Sandbox) => {
    let sandbox: InstanceType<typeof Sandbox>;
    beforeAll(async () => {
      sandbox = await Sandbox.create({ ...emulator().connectionOptions, envs: { SANDBOX_LEVEL: "from-create" } });
    });
    afterAll(async () => {
      await sandbox?.kill();
    });

    it("runs a foreground command with streaming callbacks, envs, cwd and the default user", async () => {
      const stdout: string[] = [];
      const stderr: string[] = [];
      const result = await sandbox.commands.run('echo "$SANDBOX_LEVEL $COMMAND_LEVEL"; whoami; pwd; echo warn >&2; printf "no newline"', {
        envs: { COMMAND_LEVEL: "from-run" },
        onStdout: (data) => void stdout.push(data),
        onStderr: (data) => void stderr.push(data),
      });
      expect(result.exitCode).toBe(0);
      expect(result.stdout).toBe("from-create from-run\nuser\n/home/user\nno newline");
      expect(result.stderr).toBe("warn\n");
      expect(stdout.join("")).toBe(result.stdout);
      expect(stderr.join("")).toBe("warn\n");
      const inTmp = await sandbox.commands.run("pwd", { cwd: "/tmp" });
      expect(inTmp.stdout).toBe("/tmp\n");
      const asRoot = await sandbox.commands.run("whoami; echo $HOME", { user: "root" });
      expect(asRoot.stdout).toBe("root\n/root\n");
    });

    it("throws CommandExitError for a non-zero exit code", async () => {
      const error = await sandbox.commands.run("echo partial; echo oops >&2; exit 3").catch((caught: unknown) => caught);
      expect(error).toMatchObject({ name: "CommandExitError", exitCode: 3, stdout: "partial\n", stderr: "oops\n" });
    });

    it("reports a missing cwd or unknown user as InvalidArgumentError", async () => {
      await expect(sandbox.commands.run("pwd", { cwd: "/does/not/exist" })).rejects.toMatchObject({ name: "InvalidArgumentError" });
      await expect(sandbox.commands.run("pwd", { user: "ghost" })).rejects.toMatchObject({ name: "InvalidArgumentError" });
    });

    it("ends when the command exits even if a background child still holds stdout", async () => {
      const started = Date.now();
      const result = await sandbox.commands.run("sleep 30 & echo parent-done");
      expect(result.stdout).toBe("parent-done\n");
      expect(Date.now() - started).toBeLessThan(10_000);
      await sandbox.commands.run("pkill -f '^sleep 30$' || true");
    });

    it("lists and kills a background command", async () => {
      const handle = await sandbox.commands.run("sleep 120", { background: true });
      expect(handle.pid).toBeGreaterThan(0);
      const listed = await sandbox.commands.list();
      expect(listed.map((process) => process.pid)).toContain(handle.pid);
      expect(listed.find((process) => process.pid === handle.pid)?.args).toEqual(["-l", "-c", "sleep 120"]);
      expect(await sandbox.commands.kill(handle.pid)).toBe(true);
      const outcome = await handle.wait().catch((caught: unknown) => caught);
      expect(outcome).toMatchObject({ name: "CommandExitError" });
      expect((await sandbox.commands.list()).map((process) => process.pid)).not.toContain(handle.pid);
      expect(await sandbox.commands.kill(handle.pid)).toBe(false);
    });

    it("kill signals the command's own process only, as envd does: a double-forked descendant survives", async () => {
      const handle = await sandbox.commands.run("( ( exec -a detached-grandchild sleep 300 ) & echo $! > /tmp/grandchild.pid ) & sleep 300", {
        background: true,
      });
      let grandchild = "";
      for (let attempt = 0; attempt < 50 && !grandchild; attempt++) {
        grandchild = (await sandbox.commands.run("cat /tmp/grandchild.pid 2>/dev/null || true")).stdout.trim();
      }
      expect(grandchild).toMatch(/^\d+$/);
      expect(await sandbox.commands.kill(handle.pid)).toBe(true);
      const outcome = await handle.wait().catch((caught: unknown) => caught);
      expect(outcome).toMatchObject({ name: "CommandExitError" });
      const alive = await sandbox.commands.run(`ps -o args= -p ${grandchild} || echo gone`);
      expect(alive.stdout.trim()).toBe("detached-grandchild 300");
      await sandbox.commands.run(`kill -9 ${grandchild}; pkill -9 -f '^sleep 300$' || true`, { user: "root" });
    });

    it("sends stdin to a background command and closes it", async () => {
      const handle = await sandbox.commands.run("cat; echo eof-seen", { background: true, stdin: true });
      await sandbox.commands.sendStdin(handle.pid, "first line\n");
      await sandbox.commands.sendStdin(handle.pid, "second line\n");
      await sandbox.commands.closeStdin(handle.pid);
      const result = await handle.wait();
      expect(result.stdout).toBe("first line\nsecond line\neof-seen\n");
    });

    it("keeps a command running when the stream disconnects, and reconnects to it", async () => {
      const handle = await sandbox.commands.run("for i in 1 2 3 4; do echo tick-$i; sleep 0.5; done", { background: true });
      await handle.disconnect();
      await new Promise((resolve) => setTimeout(resolve, 600));
      const reconnected = await sandbox.commands.connect(handle.pid);
      const result = await reconnected.wait();
      expect(result.exitCode).toBe(0);
      expect(result.stdout).toContain("tick-4");
      expect(result.stdout).not.toContain("tick-1");
    });

    it("streams large output without losing bytes", async () => {
      const result = await sandbox.commands.run("head -c 8000000 /dev/zero | tr '\\0' 'x'");
      expect(result.stdout.length).toBe(8_000_000);
    });
  });

  it("SendSignal with SIGTERM (raw Connect JSON) terminates that process, not its children; other signals are unimplemented", async () => {
    const { Sandbox } = await import("e2b");
    const sandbox = await Sandbox.create(emulator().connectionOptions);
    try {
      const handle = await sandbox.commands.run("sleep 100 & sleep 100 & wait", { background: true });
      const info = (await (await fetch(`${emulator().url}/_emulator/sandboxes/${sandbox.sandboxId}`)).json()) as object;
      expect(info).toMatchObject({ sandboxId: sandbox.sandboxId });
      const token = (sandbox as unknown as { envdAccessToken: string }).envdAccessToken;
      const sendSignal = (signal: unknown) =>
        fetch(`${emulator().url}/process.Process/SendSignal`, {
          method: "POST",
          headers: {
            "content-type": "application/json",
            "connect-protocol-version": "1",
            "e2b-sandbox-id": sandbox.sandboxId,
            "e2b-sandbox-port": "49983",
            "x-access-token": token,
          },
          body: JSON.stringify({ process: { pid: handle.pid }, signal }),
        });
      const refused = await sendSignal("SIGNAL_SIGINT");
      expect(refused.status).toBe(501);
      expect(await refused.json()).toMatchObject({ code: "unimplemented" });
      const response = await sendSignal("SIGNAL_SIGTERM");
      expect(response.status).toBe(200);
      const outcome = await handle.wait().catch((caught: unknown) => caught);
      expect(outcome).toMatchObject({ name: "CommandExitError", exitCode: -1, error: "signal: terminated" });
      const left = await sandbox.commands.run("pgrep -c -f '^sleep 100$' || true");
      expect(left.stdout.trim()).toBe("2");
      const unauthenticated = await fetch(`${emulator().url}/process.Process/List`, {
        method: "POST",
        headers: { "content-type": "application/json", "e2b-sandbox-id": sandbox.sandboxId, "e2b-sandbox-port": "49983" },
        body: "{}",
      });
      expect(unauthenticated.status).toBe(401);
    } finally {
      await sandbox.kill();
    }
  });
});
