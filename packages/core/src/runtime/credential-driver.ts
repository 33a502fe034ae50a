import type { SandboxDriverV1, SpawnedProcess } from "../v1/provider.js";
import type { SandboxCredentials } from "./sandbox-credentials.js";

/**
 * Wraps a driver so the sandbox's credentials follow its life: any call failing with `SandboxNotFoundError` starts
 * revocation (the sandbox is lost), and `destroy()` revokes after destroying, rejecting with
 * `CredentialRevocationError` when a credential could not be revoked. Spawn requests carry the issued values in
 * `secretValues`, so adapters that record requests can redact them.
 */
export function withCredentials(driver: SandboxDriverV1, credentials: SandboxCredentials): SandboxDriverV1 {
  const watch = async <Result>(call: () => Promise<Result>): Promise<Result> => {
    try {
      return await call();
    } catch (error) {
      credentials.noticeError(error);
      throw error;
    }
  };
  const watchProcess = (process: SpawnedProcess): SpawnedProcess => {
    const exit = process.exit.catch((error: unknown) => {
      credentials.noticeError(error);
      throw error;
    });
    return {
      pid: process.pid,
      exit,
      writeStdin: (data) => watch(() => process.writeStdin(data)),
      closeStdin: () => watch(() => process.closeStdin()),
      kill: () => watch(() => process.kill()),
    };
  };
  const wrapped: SandboxDriverV1 = {
    id: driver.id,
    workspace: driver.workspace,
    get audit() {
      return driver.audit;
    },
    spawn: (request) => watch(() => driver.spawn({ ...request, secretValues: credentials.secretValues() })).then(watchProcess),
    readFile: (path, options) => watch(() => driver.readFile(path, options)),
    writeFile: (path, data, options) => watch(() => driver.writeFile(path, data, options)),
    list: (path, options) => watch(() => driver.list(path, options)),
    stat: (path, options) => watch(() => driver.stat(path, options)),
    remove: (path, options) => watch(() => driver.remove(path, options)),
    mkdir: (path, options) => watch(() => driver.mkdir(path, options)),
    rename: (from, to, options) => watch(() => driver.rename(from, to, options)),
    async destroy() {
      try {
        await driver.destroy();
      } finally {
        // Revoke even when destroying failed: a credential must not outlive a sandbox that may be going away.
        await credentials.revokeAllOrThrow("kill");
      }
    },
  };
  if (driver.runCode) wrapped.runCode = (request) => watch(() => driver.runCode!(request));
  if (driver.createCodeContext) wrapped.createCodeContext = (request) => watch(() => driver.createCodeContext!(request));
  return wrapped;
}
