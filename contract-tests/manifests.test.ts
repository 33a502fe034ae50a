import { capabilitiesSchema, firstPartyManifests } from "@sbx/core";
import { describe, expect, it } from "vitest";

const adapters = {
  fake: () => import("@sbx/fake"),
  docker: () => import("@sbx/docker"),
  e2b: () => import("@sbx/e2b"),
  modal: () => import("@sbx/modal"),
} as const;

describe("first-party manifests known to core (adr/0006)", () => {
  for (const manifest of firstPartyManifests()) {
    it(`core's copy of the ${manifest.backend} manifest matches what @sbx/${manifest.backend} declares`, async () => {
      const load = adapters[manifest.backend as keyof typeof adapters];
      expect(load, `no adapter wired for ${manifest.backend}`).toBeDefined();
      const module = (await load()) as { createSandboxProvider: () => { backend: string; packageName: string; isolating: boolean; capabilities: unknown } };
      const provider = module.createSandboxProvider();
      expect(capabilitiesSchema.parse(provider.capabilities)).toEqual(capabilitiesSchema.parse(manifest.capabilities));
      expect(provider.backend).toBe(manifest.backend);
      expect(provider.packageName).toBe(manifest.packageName);
      expect(provider.isolating).toBe(manifest.isolating);
    });
  }
});
