import { InvalidArgumentError } from "../errors/index.js";
import type { SandboxProviderV1 } from "../v1/provider.js";

/**
 * Refuses `options.settings` keys the provider's settings schema does not name (ADR 0029), before anything is
 * created: a misspelt or foreign setting (`{ runtime: "runsc" }` given to a backend without runtimes) would otherwise
 * be ignored and the sandbox run without what was asked. A provider that declares no `settingsSchema` accepts no
 * settings. Only key names are checked here; the adapter validates the values with its own schema.
 * @throws InvalidArgumentError naming the first unknown key (`settings.<key>`) and the keys the backend knows.
 */
export function refuseUnknownSettings(provider: SandboxProviderV1, settings: Readonly<Record<string, unknown>>): void {
  const known = knownSettingKeys(provider);
  const unknown = Object.keys(settings).filter((key) => !known.includes(key));
  if (unknown.length === 0) return;
  const key = unknown[0]!;
  const knows = known.length > 0 ? `it knows ${known.join(", ")}` : "it declares no settings (its provider has no settingsSchema)";
  throw new InvalidArgumentError({
    field: `settings.${key}`,
    backend: provider.backend,
    message: `Invalid settings.${key}: the ${provider.backend} backend has no such setting; ${knows}. Remove it or fix its spelling; nothing was created.`,
  });
}

/** The keys a provider's settings schema names, sorted; empty when it declares none. */
export function knownSettingKeys(provider: SandboxProviderV1): string[] {
  const shape = provider.settingsSchema?.shape;
  if (!shape || typeof shape !== "object") return [];
  return Object.keys(shape).sort();
}
