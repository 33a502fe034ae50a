import { spawn } from "node:child_process";
import { constants as signals } from "node:os";
import type { SpawnedProcess, SpawnRequest } from "@sbx/core";

/**
 * Starts `sh -c command` in fresh Linux namespaces with `unshare`:
 * - `--pid --fork --kill-child --mount-proc`: the shell is process 1 of its own PID namespace. When it exits, or when
 *   we SIGKILL `unshare` (which takes the shell with it through `--kill-child`), the kernel kills every process left
 *   in the namespace, including ones that called `setsid` or double-forked. So a timeout kills the whole tree, and a
 *   background child cannot keep stdout open after the command is done.
 * - `--net` when egress is denied: a new network namespace with only a loopback interface (down), so nothing,
 *   not even the host's 127.0.0.1, is reachable.
 */
export function spawnInNamespace(request: SpawnRequest, settings: { denyEgress: boolean; hostPath: string }): SpawnedProcess {
  const namespaces = ["--pid", "--fork", "--kill-child", "--mount-proc", ...(settings.denyEgress ? ["--net"] : [])];
  const child = spawn("unshare", [...namespaces, "sh", "-c", request.command], {
    cwd: request.cwd,
    // Only what the caller passed, plus a PATH to find sh and python3: the host environment does not leak in.
    env: { PATH: settings.hostPath, LANG: "C.UTF-8", ...request.env },
    stdio: [request.stdin ? "pipe" : "ignore", "pipe", "pipe"],
  });
  child.stdout!.on("data", (chunk: Buffer) => request.onStdout(new Uint8Array(chunk)));
  child.stderr!.on("data", (chunk: Buffer) => request.onStderr(new Uint8Array(chunk)));
  child.stdin?.on("error", () => {}); // The command may exit without reading its input.

  // "close" fires after both pipes ended; thanks to the PID namespace that happens right after the shell exits.
  const exit = new Promise<{ exitCode: number }>((resolve, reject) => {
    child.once("error", reject);
    child.once("close", (code, signal) => {
      resolve({ exitCode: code ?? 128 + (signal ? signals.signals[signal] : 9) });
    });
  });

  return {
    pid: String(child.pid ?? "unknown"),
    exit,
    writeStdin: (data) =>
      new Promise<void>((resolve, reject) => {
        if (!child.stdin || child.stdin.destroyed) return reject(new Error("stdin is closed"));
        child.stdin.write(data, (error) => (error ? reject(error) : resolve()));
      }),
    closeStdin: async () => {
      child.stdin?.end();
    },
    // Verified: SIGKILL of unshare makes the kernel kill every process of the PID namespace (setsid or not); "close"
    // fires only once all of them are gone (they held the pipes), so awaiting the exit is the verification.
    kill: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
      await exit.catch(() => {});
    },
  };
}
