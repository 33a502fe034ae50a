import type Docker from "dockerode";

const delay = (milliseconds: number) => new Promise((resolve) => setTimeout(resolve, milliseconds));

/** Whether an exec still runs, and its exit code once it ended (one exec inspect). */
export async function inspectExec(exec: Docker.Exec): Promise<{ running: boolean; exitCode: number | null }> {
  const info = await exec.inspect();
  return { running: info.Running, exitCode: info.ExitCode };
}

/**
 * Reads the exit code of an exec whose output ended: the engine may report it running for a moment after its stream
 * closed, so inspect is asked again (5 ms apart ten times, then 50 ms apart), at most 400 times (about 20 s); past that
 * it rejects naming `what` ("the command", "the file operation"), never inventing an exit code.
 */
export async function waitForExitCode(exec: Docker.Exec, what: string): Promise<number> {
  for (let attempt = 0; attempt < 400; attempt++) {
    const { running, exitCode } = await inspectExec(exec);
    if (!running && exitCode !== null && exitCode !== undefined) return exitCode;
    await delay(attempt < 10 ? 5 : 50);
  }
  throw new Error(`the engine kept reporting ${what} as running after its output ended`);
}
