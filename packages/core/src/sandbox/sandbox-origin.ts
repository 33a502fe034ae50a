import { InvalidArgumentError } from "../errors/index.js";
import type { SandboxProviderV1 } from "../v1/provider.js";
import type { Sandbox } from "../v1/sandbox.js";

/** The provider behind each sandbox core built, so `forkSandbox` creates the copies on the same backend and engine. */
const origins = new WeakMap<Sandbox, SandboxProviderV1>();

/** Records the provider that made a sandbox (called by `createSandboxFromDriver`). */
export function rememberOrigin(sandbox: Sandbox, provider: SandboxProviderV1): void {
  origins.set(sandbox, provider);
}

/** The provider that made `sandbox`; `InvalidArgumentError` (field `sandbox`) for an object sbx did not make. */
export function providerOf(sandbox: Sandbox): SandboxProviderV1 {
  const provider = typeof sandbox === "object" && sandbox !== null ? origins.get(sandbox) : undefined;
  if (!provider)
    throw new InvalidArgumentError({
      field: "sandbox",
      message: "Invalid sandbox: expected a sandbox returned by createSandbox() or connectSandbox().",
    });
  return provider;
}
