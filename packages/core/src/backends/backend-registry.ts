import type { BackendManifest } from "./backend-manifest.js";
import { FIRST_PARTY_BACKENDS } from "./first-party-backends.js";
import type { CapabilityName } from "../v1/capabilities.js";

export type { BackendManifest } from "./backend-manifest.js";

/**
 * The first-party manifests, known to core so `supportedBy` can name backends that are not installed: a table generated
 * from the adapters' own manifests (scripts/generate-first-party-backends.mjs; `contract-tests/manifests.test.ts` fails
 * when it drifts). Each first-party adapter re-registers its own manifest when loaded, which overrides this copy. See
 * adr/0006 and adr/0040.
 */
const FIRST_PARTY_MANIFESTS: readonly BackendManifest[] = FIRST_PARTY_BACKENDS;

const registry = new Map<string, BackendManifest>(FIRST_PARTY_MANIFESTS.map((manifest) => [manifest.backend, manifest]));

/**
 * Registers (or replaces) a backend's manifest. Adapters call this when their provider is created, so
 * `supportedBy` stays right as manifests change, without core depending on adapter packages.
 */
export function registerBackendManifest(manifest: BackendManifest): void {
  registry.set(manifest.backend, manifest);
}

/** Every known backend manifest: first-party ones plus any registered, the registered copy winning. */
export function listBackendManifests(): BackendManifest[] {
  return [...registry.values()];
}

/** The manifest of one backend, if known. */
export function getBackendManifest(backend: string): BackendManifest | undefined {
  return registry.get(backend);
}

/** Backends known to support a capability (or a `runCode` language when `capability` is `"language:<name>"`), excluding `except`. */
export function backendsSupporting(capability: CapabilityName | `language:${string}`, except?: string): string[] {
  const names: string[] = [];
  for (const manifest of registry.values()) {
    if (manifest.backend === except) continue;
    const supported = isLanguageCapability(capability)
      ? manifest.capabilities.languages.includes(capability.slice("language:".length))
      : manifest.capabilities[capability] === true;
    if (supported) names.push(manifest.backend);
  }
  return names.sort();
}

function isLanguageCapability(capability: string): capability is `language:${string}` {
  return capability.startsWith("language:");
}

/** The first-party manifests as shipped in this version of core (for drift tests). */
export function firstPartyManifests(): readonly BackendManifest[] {
  return FIRST_PARTY_MANIFESTS;
}
