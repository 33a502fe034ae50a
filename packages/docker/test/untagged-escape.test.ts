import { readFileSync } from "node:fs";
import { isSbxError } from "@sbx/core";
import { expect, it } from "vitest";
import { createTestSandbox, describeWithDocker } from "./docker-test-environment.js";

// adr/0030: a command's kill reports `killed: true` only when nothing of the command is left. The audit tag (ADR
// 0012) cannot follow a process the command made out of an *untagged* process of the sandbox user: here the command
// ptraces sbx's own untagged file exec (a stream read the host holds open) and turns it into `/bin/sleep MARK`.
// The kill must find that process too (every untagged process of the sandbox user but the agent) or end the sandbox.

const HIJACK = readFileSync(new URL("./fixtures/untagged-hijack.py", import.meta.url), "utf8");
/** The hijacked process's argument; searched for as `4242[.]5` so the search never matches itself. */
const MARK = "4242.5";

describeWithDocker("a command that escapes its audit tag through an untagged process (adr/0030)", () => {
  for (const agentCommands of ["off", "start"] as const) {
    it(`is killed with its command, or the sandbox is ended (commands: ${agentCommands})`, async () => {
      await using sandbox = await createTestSandbox({}, { agentCommands });
      await sandbox.files.write("hijack.py", HIJACK);
      await sandbox.commands.run("head -c 16777216 /dev/zero > big.bin");
      // The held read's `cat` blocks on its full pipe: an untagged process of the sandbox user, for as long as we like.
      const held = await sandbox.files.read("big.bin", { format: "stream" });
      let output = "";
      const handle = await sandbox.commands.start(`python3 hijack.py ${MARK}`, { onStdout: (text) => (output += text) });
      for (let waited = 0; !output.includes("escaped") && !output.includes("nothing") && waited < 30_000; waited += 100)
        await new Promise((resolve) => setTimeout(resolve, 100));
      expect(output, "the attack must have hijacked the held read's process").toMatch(/^escaped \d+\n$/);
      // Drain what the read had buffered first: the engine stalls every exec of a container while an exec whose
      // output the host holds back is killed (seen on Engine here), which would hide the kill's outcome.
      const reading = new Response(held).arrayBuffer();
      reading.catch(() => {});
      await new Promise((resolve) => setTimeout(resolve, 1500));
      const kill = await handle.kill().then(
        () => "verified" as const,
        (error: unknown) => error,
      );
      if (isSbxError(kill, "SBX_SANDBOX_NOT_FOUND")) return; // sbx ended the sandbox instead: the other honest outcome.
      expect(kill instanceof Error ? kill.message : kill, "kill() resolving claims that nothing of the command is left").toBe("verified");
      expect((await handle.wait()).exitCode).toBe(137);
      const survivors = await sandbox.commands.run("grep -sla '4242[.]5' /proc/[0-9]*/cmdline || true");
      expect(survivors.stdout, "processes of the command alive after a verified kill").toBe("");
      // The host's read lost its process: an error, never a short success.
      await expect(reading).rejects.toThrow(/exit code 137/);
    });
  }
});
