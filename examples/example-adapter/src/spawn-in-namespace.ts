import { spawn } from "node:child_process";
import { constants } from "node:os";
import { type SpawnedProcess, type SpawnRequest, onlyStandardDescriptors } from "@sbx/core/adapter";

/**
 * Starts `sh -c command` in fresh Linux namespaces with `unshare`. `--pid --fork --kill-child --mount-proc`: the shell
 * is process 1 of its own PID namespace; when it exits, or when `unshare` is SIGKILLed, the kernel kills every process
 * left in it (setsid and double-forked ones too), so a kill takes the whole tree and no background child holds stdout
 * open. `--net` when egress is denied: a namespace with only a loopback interface, down (not even the host's 127.0.0.1).
 * The environment is exactly what core passes (its defaults PATH, HOME, LANG plus the caller's): nothing of the host's. */
export function spawnInNamespace(request: SpawnRequest, settings: { denyEgress: boolean }): SpawnedProcess {
  const namespaces = ["--pid", "--fork", "--kill-child", "--mount-proc", ...(settings.denyEgress ? ["--net"] : [])];
  // A missing cwd is the shell's own error and exit 126, as on every backend (ADR 0020), not a spawn failure.
  // Only stdin, stdout and stderr reach the command: not the descriptors this Node process inherited (ADR 0029).
  const [file, ...args] = onlyStandardDescriptors([
    "unshare",
    ...namespaces,
    "sh",
    "-c",
    'cd -- "$1" || exit 126; exec sh -c "$2"',
    "sbx",
    request.cwd,
    request.command,
  ]);
  const child = spawn(file, args, { cwd: "/", env: { ...request.env }, stdio: [request.stdin ? "pipe" : "ignore", "pipe", "pipe"] });
  child.stdout!.on("data", (chunk: Buffer) => request.onStdout(new Uint8Array(chunk)));
  child.stderr!.on("data", (chunk: Buffer) => request.onStderr(new Uint8Array(chunk)));
  child.stdin?.on("error", () => {}); // The command may exit without reading its input.
  // "close" fires after both pipes ended: right after the shell exits, thanks to the PID namespace.
  const exit = new Promise<{ exitCode: number }>(
    (resolve, reject) =>
      void child.once("error", reject).once("close", (code, signal) => resolve({ exitCode: code ?? 128 + (signal ? constants.signals[signal] : 9) })),
  );
  return {
    pid: String(child.pid ?? "unknown"),
    exit,
    writeStdin: (data) =>
      new Promise<void>((resolve, reject) => {
        if (!child.stdin || child.stdin.destroyed) return reject(new Error("stdin is closed"));
        child.stdin.write(data, (error) => (error ? reject(error) : resolve()));
      }),
    closeStdin: async () => void child.stdin?.end(),
    // Verified: SIGKILL of unshare kills every process of the PID namespace; "close" fires only once all of them are
    // gone (they held the pipes), so awaiting the exit is the verification.
    kill: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
      await exit.catch(() => {});
    },
  };
}
