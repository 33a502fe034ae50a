import type { Duplex, Readable } from "node:stream";
import type Docker from "dockerode";

const delay = (milliseconds: number) => new Promise((resolve) => setTimeout(resolve, milliseconds));

/** How many times an exec's exit code is asked for (5 ms apart at first, then 50 ms: about 20 s) before giving up. */
const EXIT_CODE_ATTEMPTS = 400;

/**
 * Starts one exec of sbx's own (a file helper, a kill or probe script): an argument vector (never a shell string
 * built from caller data), no TTY, never privileged, stdout and stderr attached, stdin only when `options.stdin`.
 */
export async function startHelperExec(
  container: Docker.Container,
  argv: readonly string[],
  options: { readonly user: string; readonly cwd?: string; readonly env?: readonly string[]; readonly stdin?: boolean },
): Promise<{ readonly exec: Docker.Exec; readonly stream: Duplex & Readable }> {
  const stdin = options.stdin === true;
  const exec = await container.exec({
    Cmd: [...argv],
    AttachStdin: stdin || undefined,
    AttachStdout: true,
    AttachStderr: true,
    Tty: false,
    User: options.user,
    WorkingDir: options.cwd,
    Env: options.env ? [...options.env] : undefined,
    Privileged: false,
  });
  const stream = (await exec.start({ hijack: stdin, stdin, Tty: false })) as Duplex & Readable;
  return { exec, stream };
}

/**
 * The exit code of an exec whose output ended, asking the engine until it no longer reports the exec running (it
 * notices the exit a moment after the stream ends). Rejects when it keeps reporting it running (about 20 s).
 */
export async function waitForExitCode(exec: Docker.Exec): Promise<number> {
  for (let attempt = 0; attempt < EXIT_CODE_ATTEMPTS; attempt++) {
    const info = await exec.inspect();
    if (!info.Running && info.ExitCode !== null && info.ExitCode !== undefined) return info.ExitCode;
    await delay(attempt < 10 ? 5 : 50);
  }
  throw new Error("the engine kept reporting the exec as running after its output ended");
}
