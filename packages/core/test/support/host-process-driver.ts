/**
 * A driver whose `spawn` runs real host processes with `sh -c`, for testing `runPythonOneShot` end to end with the
 * host's python3. Only `spawn` is implemented; it isolates nothing and is used only by core's own tests.
 */
import { spawn as spawnChild } from "node:child_process";
import type { SandboxDriverV1, SpawnedProcess, SpawnRequest } from "../../src/adapter.ts";

function unsupported(): never {
  throw new Error("the host-process test driver only implements spawn");
}

/** Makes a host-process driver rooted at `workspace` (a host directory). */
export function createHostProcessDriver(workspace: string): SandboxDriverV1 & { commands: string[] } {
  const commands: string[] = [];
  return {
    id: "host-1",
    workspace,
    commands,
    audit: {
      backendVersion: "host",
      policies: {
        network: { requested: null, applied: null, enforcement: "none" },
        limits: { requested: null, applied: null, enforcement: "none" },
        mounts: { requested: null, applied: null, enforcement: "none" },
        user: { requested: null, applied: null, enforcement: "none" },
        lifetime: { requested: null, applied: null, enforcement: "none" },
      },
    },
    async spawn(request: SpawnRequest): Promise<SpawnedProcess> {
      commands.push(request.command);
      const child = spawnChild("sh", ["-c", request.command], {
        cwd: request.cwd,
        env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: process.env.HOME ?? "/tmp", ...request.env },
        stdio: [request.stdin ? "pipe" : "ignore", "pipe", "pipe"],
      });
      child.stdout!.on("data", (chunk: Buffer) => request.onStdout(new Uint8Array(chunk)));
      child.stderr!.on("data", (chunk: Buffer) => request.onStderr(new Uint8Array(chunk)));
      const exit = new Promise<{ exitCode: number }>((resolve, reject) => {
        child.on("error", reject);
        child.on("close", (code, signal) => resolve({ exitCode: code ?? 128 + (signal === "SIGKILL" ? 9 : 15) }));
      });
      return {
        pid: String(child.pid),
        exit,
        writeStdin: (data) => new Promise<void>((resolve, reject) => child.stdin!.write(data, (error) => (error ? reject(error) : resolve()))),
        closeStdin: async () => {
          child.stdin?.end();
        },
        kill: async () => {
          child.kill("SIGKILL");
        },
      };
    },
    readFile: unsupported,
    writeFile: unsupported,
    list: unsupported,
    stat: unsupported,
    remove: unsupported,
    mkdir: unsupported,
    rename: unsupported,
    destroy: async () => {},
  };
}
