import { InvalidArgumentError } from "../errors/index.js";
import type { ResolvedCreateOptions } from "../v1/options.js";
import type { SandboxProviderV1 } from "../v1/provider.js";
import { checkProvider, loadProvider, parseTarget, pickAutomaticProvider } from "./resolve-backend.js";

/**
 * The provider a target names, as `createSandbox` resolves it: a provider object (checked), `"auto"` (the first
 * usable backend), or `"scheme://target"` (the adapter loaded with the options' settings); with the part after
 * `scheme://` the backend is given.
 */
export async function resolveProvider(
  target: string | SandboxProviderV1,
  resolved: ResolvedCreateOptions,
  backends: readonly string[] | undefined,
  signal: AbortSignal | undefined,
): Promise<{ provider: SandboxProviderV1; providerTarget: string }> {
  if (typeof target === "object" && target !== null) return { provider: checkProvider(target), providerTarget: "" };
  if (typeof target !== "string")
    throw new InvalidArgumentError({
      field: "target",
      message: 'Invalid target: expected a string such as "docker://python:3.12-slim" or a provider object.',
    });
  if (target.toLowerCase() === "auto") return { provider: await pickAutomaticProvider(resolved, backends, signal), providerTarget: "" };
  const parsed = parseTarget(target);
  return { provider: await loadProvider(parsed.scheme, resolved.settings), providerTarget: parsed.target };
}
