import { spawn } from "node:child_process";
import { once } from "node:events";
import { fileURLToPath } from "node:url";
import { expect, it } from "vitest";
import { describeWithDocker, docker } from "./docker-test-environment.js";

/** What the child host process reported after its root sandbox attacked its own deadline. */
interface AttackReport {
  readonly id: string;
  readonly createdAt: number;
  readonly expiresAt: string;
  readonly deadlineUser: string;
  readonly attack: string;
}

/** Starts the child host (fixtures/create-root-and-stop-deadline.mjs) and waits for its report. */
async function startRootHost(options: { lifetimeMs: number; keepAfterHostExit: boolean }) {
  const child = spawn(process.execPath, [fileURLToPath(new URL("./fixtures/create-root-and-stop-deadline.mjs", import.meta.url))], {
    cwd: fileURLToPath(new URL("..", import.meta.url)),
    stdio: ["ignore", "pipe", "inherit"],
    env: { ...process.env, SBX_LIFETIME_MS: String(options.lifetimeMs), SBX_KEEP_AFTER_HOST_EXIT: options.keepAfterHostExit ? "1" : "0" },
  });
  let output = "";
  child.stdout!.setEncoding("utf8");
  child.stdout!.on("data", (text: string) => (output += text));
  while (!output.includes("\n")) {
    if (child.exitCode !== null) throw new Error(`the host child exited early with ${child.exitCode}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return { child, report: JSON.parse(output) as AttackReport };
}

async function running(id: string): Promise<boolean> {
  try {
    return (await docker.getContainer(id).inspect()).State.Running;
  } catch (error) {
    if ((error as { statusCode?: number }).statusCode === 404) return false;
    throw error;
  }
}

/** Polls until the container is gone or `deadline` (epoch ms) passes; returns when it was seen gone, or null. */
async function goneBy(id: string, deadline: number): Promise<number | null> {
  while (Date.now() < deadline) {
    if (!(await running(id))) return Date.now();
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  return (await running(id)) ? null : Date.now();
}

/** The attack's lines: each deadline process it found, and whether SIGSTOP went through. */
function stopAttempts(report: AttackReport): string[] {
  return report.attack.split("\n").filter((line) => line.startsWith("stop:"));
}

describeWithDocker("a root sandbox cannot stop its own lifetime (ADR 0033)", () => {
  it("with its host SIGKILLed and no dead-man's switch, a root sandbox that SIGSTOPs its deadline still ends within 10 s of its lifetime", async () => {
    const lifetimeMs = 8000;
    const { child, report } = await startRootHost({ lifetimeMs, keepAfterHostExit: true });
    try {
      expect(report.attack.trim().split("\n").at(-1)).toBe("0");
      expect(report.deadlineUser).toBe("65534:65534");
      const attempts = stopAttempts(report);
      // The deadline shell, its sleep subshell and the sleep itself.
      expect(attempts.length).toBeGreaterThanOrEqual(3);
      for (const line of attempts) expect(line).toMatch(/^stop: refused \d+ /);
      child.kill("SIGKILL");
      await once(child, "exit");
      const lifetimeEnd = Date.parse(report.expiresAt);
      const seenGone = await goneBy(report.id, lifetimeEnd + 10_000);
      expect(seenGone).not.toBeNull();
    } finally {
      child.kill("SIGKILL");
      await docker
        .getContainer(report.id)
        .remove({ force: true, v: true })
        .catch(() => undefined);
    }
  });

  it("with its host SIGKILLed, a root sandbox that SIGSTOPs the dead-man's switch still ends long before its lifetime", async () => {
    const { child, report } = await startRootHost({ lifetimeMs: 120_000, keepAfterHostExit: false });
    try {
      const attempts = stopAttempts(report);
      // The deadline shell, its sleep subshell, the sleep and the cat holding stdin.
      expect(attempts.length).toBeGreaterThanOrEqual(4);
      expect(attempts.some((line) => / cat$/.test(line))).toBe(true);
      for (const line of attempts) expect(line).toMatch(/^stop: refused \d+ /);
      child.kill("SIGKILL");
      await once(child, "exit");
      const seenGone = await goneBy(report.id, Date.now() + 30_000);
      expect(seenGone).not.toBeNull();
    } finally {
      child.kill("SIGKILL");
      await docker
        .getContainer(report.id)
        .remove({ force: true, v: true })
        .catch(() => undefined);
    }
  });
});
