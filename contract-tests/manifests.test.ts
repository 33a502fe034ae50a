import { tmpdir } from "node:os";
import { join } from "node:path";
import { rm } from "node:fs/promises";
import { capabilitiesSchema, checkProvider, createSandbox, type SandboxProviderV1 } from "@sbx/core";
import { firstPartyManifests } from "@sbx/core/adapter";
import { createSandboxProvider as createExampleAdapterProvider } from "@sbx/example-adapter";
import { createExampleProvider as createFrozenShapeProvider } from "./fixtures/full-driver-adapter/example-provider.js";
import { afterAll, describe, expect, it } from "vitest";

const adapters = {
  fake: () => import("@sbx/fake"),
  docker: () => import("@sbx/docker"),
  "apple-container": () => import("@sbx/apple-container"),
  e2b: () => import("@sbx/e2b"),
  modal: () => import("@sbx/modal"),
  k8s: () => import("@sbx/kubernetes"),
} as const;

describe("first-party manifests known to core (adr/0006, adr/0040: a table generated from the adapters)", () => {
  for (const manifest of firstPartyManifests()) {
    it(`core's generated table entry for ${manifest.backend} matches what @sbx/${manifest.backend} declares (else rerun node scripts/generate-first-party-backends.mjs)`, async () => {
      const load = adapters[manifest.backend as keyof typeof adapters];
      expect(load, `no adapter wired for ${manifest.backend}`).toBeDefined();
      const module = (await load()) as {
        createSandboxProvider: () => { backend: string; packageName: string; isolating: boolean; capabilities: unknown };
      };
      const provider = module.createSandboxProvider();
      expect(capabilitiesSchema.parse(provider.capabilities)).toEqual(capabilitiesSchema.parse(manifest.capabilities));
      expect(provider.backend).toBe(manifest.backend);
      expect(provider.packageName).toBe(manifest.packageName);
      expect(provider.isolating).toBe(manifest.isolating);
    });
  }
});

describe("capability flags and their methods agree in every adapter (adr/0035)", () => {
  const root = join(tmpdir(), `sbx-manifests-${process.pid}`);
  const providers: Record<string, () => Promise<SandboxProviderV1>> = {
    ...Object.fromEntries(
      Object.entries(adapters).map(([backend, load]) => [
        backend,
        async () => ((await load()) as { createSandboxProvider: () => SandboxProviderV1 }).createSandboxProvider(),
      ]),
    ),
    example: async () => createExampleAdapterProvider({ root: join(root, "example") }),
    "full-driver (sbx 0.1 shape)": async () => createFrozenShapeProvider({ root: join(root, "frozen") }),
  };

  for (const [name, make] of Object.entries(providers)) {
    it(`${name}: core loads the provider (checkProvider refuses a flag without its method and a method without its flag)`, async () => {
      const provider = await make();
      expect(checkProvider(provider)).toBe(provider);
    });
  }

  // The driver half of the check runs when a sandbox is made: the in-process adapters show their drivers pass it.
  for (const name of ["fake", "example", "full-driver (sbx 0.1 shape)"]) {
    it(`${name}: a created sandbox passes the driver check and runs a command`, async () => {
      const provider = await providers[name]!();
      await using sandbox = await createSandbox(provider, { allowFake: true });
      const result = await sandbox.commands.run("echo ok");
      expect(result.stdout).toBe("ok\n");
    });
  }

  afterAll(async () => {
    await rm(root, { recursive: true, force: true });
  });
});
