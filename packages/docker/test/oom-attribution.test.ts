import { expect, it } from "vitest";
import { createTestSandbox, describeWithDocker } from "./docker-test-environment.js";

// adr/0030: a command's result says `outOfMemoryKilled: true` only when it is known that the OOM killer ended this
// command's process. The sandbox's `oom_kill` counter says that the OOM killer ended *some* process while the
// command ran, not which: a command that SIGKILLs itself right after another process hit the memory limit must not
// be reported as killed for memory. The engine offers nothing that names the victim, so a grown counter is "unknown".

/** A hog that the OOM killer ends (another process of the sandbox), then the command's own shell SIGKILLs itself. */
const SELF_KILL_AFTER_SOMEONE_ELSES_OOM = 'python3 -c "x = bytearray(512 * 1024 * 1024)"; echo hog=$?; kill -9 $$';

describeWithDocker("out-of-memory attribution (adr/0030)", () => {
  for (const agentCommands of ["off", "start"] as const) {
    it(`a command that kills itself while another process is OOM-killed is not reported as OOM-killed (commands: ${agentCommands})`, async () => {
      await using sandbox = await createTestSandbox({ limits: { memoryMiB: 96 } }, { agentCommands });
      const where = (await sandbox.commands.run("tr '\\0' ' ' </proc/$PPID/cmdline | head -c 10")).stdout;
      expect(where).toBe(agentCommands === "start" ? "python3 -I" : "sh -c echo");
      const attack = await sandbox.commands.run(SELF_KILL_AFTER_SOMEONE_ELSES_OOM);
      // The hog was the OOM killer's victim (exit 137 seen by the shell), the command's shell died of its own SIGKILL.
      expect(attack.stdout).toBe("hog=137\n");
      expect(attack.exitCode).toBe(137);
      expect(attack.outOfMemoryKilled, "the counter says some process was OOM-killed, not that this one was").not.toBe(true);
      expect(attack.outOfMemoryKilled).toBeNull();
      // No OOM kill while it ran: known, false.
      const own = await sandbox.commands.run("kill -9 $$");
      expect(own.exitCode).toBe(137);
      expect(own.outOfMemoryKilled).toBe(false);
      const normal = await sandbox.commands.run("echo ok");
      expect(normal.outOfMemoryKilled).toBe(false);
    });
  }
});
