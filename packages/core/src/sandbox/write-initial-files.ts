import type { InitialFile } from "../v1/initial-files.js";
import type { Sandbox } from "../v1/sandbox.js";

/**
 * Writes `createSandbox({ files })` into a sandbox that was just made, one `files.write` each (so each is confined,
 * redacted and typed like any file call, through the backend's own file channel), before `createSandbox` resolves.
 * When one fails (or `signal` aborts), the sandbox is killed and that failure is thrown: a refused create leaves
 * nothing running behind the rejection (ADR 0046).
 */
export async function writeInitialFiles(sandbox: Sandbox, files: readonly InitialFile[], signal: AbortSignal | undefined): Promise<Sandbox> {
  try {
    for (const file of files) await sandbox.files.write(file.path, file.content, { signal });
  } catch (error) {
    await sandbox.kill().catch(() => {});
    throw error;
  }
  return sandbox;
}
