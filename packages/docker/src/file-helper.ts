import { helperEnvironment, posixFileOperationsOver, type PosixFileOperations } from "@sbx/core/adapter";
import type Docker from "dockerode";
import { execRead, execWrite } from "./exec-file-io.js";
import { runArgv } from "./exec-process.js";

/**
 * The group core's file helper runs under on Docker: one no account of the image is in, so no process of the sandbox
 * shares the helper's credentials. Files and folders the helper creates carry it as their group.
 */
export const FILE_HELPER_GID = 2147483646;

/**
 * Core's POSIX file operations and their policy (ADR 0020: every parent confined to the workspace, links resolved
 * inside the sandbox, writes to a temporary name renamed over the target), run through plain execs of core's race-free
 * file helper as the sandbox's uid under a group of its own (ADR 0031), with paths as arguments (never interpolated).
 * Not core's defaults over `spawn`: those run as the sandbox user itself, whose code could then reach into the helper.
 * No path is resolved with more rights than the sandbox's own code (the engine's archive API, which resolves paths as
 * root, is not used); reads stream with bounded read-ahead (`execRead`), writes with backpressure (`execWrite`).
 * `options.maxOutputBytes` caps what one helper may print (default 64 MiB, `runArgv`); past it the call fails with
 * `HelperOutputTooLargeError`.
 */
export function fileHelperOperations(
  container: Docker.Container,
  options: { readonly user: string; readonly workspace: string; readonly maxOutputBytes?: number },
): PosixFileOperations {
  // The helper runs as the sandbox's uid under a group of its own (ADR 0031): the kernel lets a process open another's
  // /proc/<pid>/fd (the pipes to the host) or read its memory only when uid *and* gid all match, so the sandbox's
  // code (no CAP_SYS_PTRACE, no CAP_SETGID, no-new-privileges) can neither write into a helper's answer nor read what
  // it carries, while the helper keeps exactly the sandbox user's access to the workspace (owner permissions).
  const env = Object.entries(helperEnvironment(options.workspace)).map(([name, value]) => `${name}=${value}`);
  const helperUser = `${options.user.split(":")[0]}:${FILE_HELPER_GID}`;
  const argv = (request: { script: string; name: string; args: readonly string[] }) => ["sh", "-c", request.script, request.name, ...request.args];
  return posixFileOperationsOver(
    {
      async run(request) {
        if (request.stdin) {
          const written = await execWrite(container, argv(request), request.stdin, { user: helperUser, env, signal: request.signal });
          return { ...written, stdout: new Uint8Array() };
        }
        return runArgv(container, argv(request), { user: helperUser, env, maxOutputBytes: options.maxOutputBytes });
      },
      read: (request) => execRead(container, argv(request), { user: helperUser, env, signal: request.signal }),
    },
    { backend: "docker" },
  );
}
