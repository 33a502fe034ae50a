/**
 * setLifetime on Docker (ADR 0050): the deadline is replaced from outside by its own uid, and the sandbox (default user
 * or root) can neither kill the new timer nor end the deadline early through it, nor start a timer of its own that
 * counts. The portable behaviour (extend, shorten) is in the contract suite.
 */
import { expect, it } from "vitest";
import { sweepOrphans } from "../src/index.js";
import { createTestSandbox, describeWithDocker } from "./docker-test-environment.js";

describeWithDocker("setLifetime on Docker", () => {
  for (const user of ["default", "root"] as const) {
    it(`a ${user} sandbox cannot touch the replaced deadline timer`, { timeout: 120_000 }, async () => {
      await using sandbox = await createTestSandbox({ timeoutMs: 600_000, user });
      await sandbox.setLifetime({ timeoutMs: 300_000 });
      await sandbox.setLifetime({ timeoutMs: 240_000 });
      const listing = await sandbox.commands.run("ps -eo user=,args=");
      // One timer of the new length, the first lifetime's sleep and the first replacement gone.
      const sleeps = listing.stdout.split("\n").filter((line) => /\bsleep \d+$/.test(line.trim()));
      expect(sleeps.map((line) => line.trim().split(/\s+/).slice(1).join(" "))).toEqual(["sleep 240"]);
      const owner = user === "root" ? "nobody" : "root";
      expect(sleeps[0]!.trim().split(/\s+/)[0]).toBe(owner);
      // Killing it from inside is refused (another uid, no capability).
      const attack = await sandbox.commands.run(
        "for p in $(ps -eo pid=,args= | awk '/sbx-lifetime|sleep 240/ && !/awk/ { print $1 }'); do kill -9 $p 2>/dev/null && echo killed $p || echo refused $p; done",
      );
      expect(attack.stdout).toMatch(/refused/);
      expect(attack.stdout).not.toMatch(/killed/);
      expect((await sandbox.commands.run("echo alive")).stdout).toBe("alive\n");
      // The audit record lists both changes, in order.
      const applied = sandbox.audit().policies.lifetimeChanges!.applied as Array<{ expiresAt: string }>;
      expect(applied.length).toBe(2);
    });
  }

  it("a sandbox extended past its first end survives `sbx gc` (sweepOrphans) while its owner lives", { timeout: 120_000 }, async () => {
    await using sandbox = await createTestSandbox({ timeoutMs: 3_000 });
    await sandbox.setLifetime({ timeoutMs: 120_000 });
    // Past the first end, which the container's sbx.expires-at label still says.
    await new Promise((resolve) => setTimeout(resolve, 5_000));
    const swept = await sweepOrphans();
    expect(swept.containers).not.toContain(sandbox.id);
    expect((await sandbox.commands.run("echo alive")).stdout).toBe("alive\n");
  });
});
