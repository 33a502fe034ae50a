import type { SandboxDriverV1, SpawnedProcess, SpawnRequest } from "../v1/provider.js";
import type { SandboxCredentials } from "./sandbox-credentials.js";

/**
 * Wraps a driver so the sandbox's credentials follow its life: any call failing with `SandboxNotFoundError` starts
 * revocation (the sandbox is lost), and `destroy()` revokes after destroying, rejecting with
 * `CredentialRevocationError` when a credential could not be revoked. Spawn requests carry the issued values in
 * `secretValues`, so adapters that record requests can redact them. Every other member of the driver (including
 * optional ones added later) passes through unchanged, its failures watched the same way.
 */
export function withCredentials(driver: SandboxDriverV1, credentials: SandboxCredentials): SandboxDriverV1 {
  const watched = <Result>(result: Result): Result => {
    if (result && typeof (result as { then?: unknown }).then === "function") {
      return (result as unknown as Promise<unknown>).catch((error: unknown) => {
        credentials.noticeError(error);
        throw error;
      }) as Result;
    }
    return result;
  };
  const watchProcess = (process: SpawnedProcess): SpawnedProcess => ({
    pid: process.pid,
    exit: watched(process.exit),
    writeStdin: (data) => watched(process.writeStdin(data)),
    closeStdin: () => watched(process.closeStdin()),
    kill: () => watched(process.kill()),
  });
  const overrides: Partial<Record<keyof SandboxDriverV1, unknown>> = {
    spawn: (request: SpawnRequest) => watched(driver.spawn({ ...request, secretValues: credentials.secretValues() })).then(watchProcess),
    async destroy() {
      try {
        await driver.destroy();
      } finally {
        // Revoke even when destroying failed: a credential must not outlive a sandbox that may be going away.
        await credentials.revokeAllOrThrow("kill");
      }
    },
  };
  return new Proxy(driver, {
    get(target, property) {
      if (Object.hasOwn(overrides, property)) return overrides[property as keyof SandboxDriverV1];
      const value = Reflect.get(target, property, target) as unknown;
      if (typeof value !== "function") return value;
      return (...args: unknown[]) => {
        try {
          return watched((value as (...parameters: unknown[]) => unknown).apply(target, args));
        } catch (error) {
          credentials.noticeError(error);
          throw error;
        }
      };
    },
  });
}
