/**
 * detectBackends and createSandbox("auto"). Registered factories win over adapter packages, so "docker" and "e2b"
 * are overridden here with in-memory providers whose detect() says what each test needs. The registry is
 * per test file (vitest isolates files), so these overrides do not leak into other tests.
 */
import { caught } from "./support/caught.ts";
import { describe, expect, it } from "vitest";
import { AUTO_PREFERENCE_ORDER, BackendUnavailableError, createSandbox, detectBackends, registerProvider } from "../src/index.ts";
import { createMemoryProvider } from "./support/memory-driver.ts";

function registerBackend(backend: string, usable: boolean) {
  registerProvider(backend, () =>
    createMemoryProvider({
      backend,
      status: usable
        ? { isolating: backend !== "fake" }
        : { usable: false, reason: `${backend} is not running here`, remedy: `Start ${backend}-remedy.`, isolating: backend !== "fake" },
    }),
  );
}

describe("detectBackends", () => {
  it("returns one status per known backend (first-party and registered), each with a reason and, when unusable, a remedy", async () => {
    registerBackend("detect-usable", true);
    registerBackend("detect-unusable", false);
    const statuses = await detectBackends();
    const names = statuses.map((status) => status.backend);
    for (const backend of ["docker", "e2b", "fake", "detect-usable", "detect-unusable"]) expect(names).toContain(backend);
    expect(new Set(names).size).toBe(names.length);
    for (const status of statuses) {
      expect(typeof status.usable).toBe("boolean");
      expect(typeof status.reason).toBe("string");
      expect(typeof status.isolating).toBe("boolean");
      if (!status.usable) expect(status.remedy.length).toBeGreaterThan(0);
    }
    expect(statuses.find((status) => status.backend === "detect-usable")!.usable).toBe(true);
    expect(statuses.find((status) => status.backend === "detect-unusable")).toMatchObject({ usable: false, remedy: "Start detect-unusable-remedy." });
  });

  it("a backend whose detect() throws is reported unusable with the reason, not thrown", async () => {
    registerProvider("detect-throws", () => ({
      ...createMemoryProvider({ backend: "detect-throws" }),
      detect: async () => {
        throw new Error("socket exploded");
      },
    }));
    const status = (await detectBackends()).find((entry) => entry.backend === "detect-throws")!;
    expect(status.usable).toBe(false);
    expect(status.reason).toContain("socket exploded");
    expect(status.remedy.length).toBeGreaterThan(0);
  });
});

describe('createSandbox("auto")', () => {
  it("tries docker, then apple-container, then e2b, then modal", () => {
    expect(AUTO_PREFERENCE_ORDER).toEqual(["docker", "apple-container", "e2b", "modal"]);
  });

  it("with no usable isolating backend and allowFake false → BackendUnavailableError that mentions allowFake and each backend's remedy", async () => {
    registerBackend("docker", false);
    registerBackend("e2b", false);
    registerBackend("modal", false);
    for (const call of [() => createSandbox("auto"), () => createSandbox()]) {
      const error = await caught(call);
      expect(error).toBeInstanceOf(BackendUnavailableError);
      expect(error.code).toBe("SBX_BACKEND_UNAVAILABLE");
      expect(error.backend).toBe("auto");
      expect(error.message).toContain("allowFake");
      expect(error.message).toContain("docker is not running here");
      expect(error.message).toContain("e2b is not running here");
      expect(error.remedy).toContain("Start docker-remedy.");
      expect(error.remedy).toContain("Start e2b-remedy.");
      expect(error.alternatives.join(" ")).toContain("allowFake");
    }
  });

  it("never falls back to the fake without allowFake, even when the fake is usable", async () => {
    registerBackend("docker", false);
    registerBackend("e2b", false);
    registerBackend("modal", false);
    registerBackend("fake", true);
    expect(await caught(() => createSandbox("auto"))).toBeInstanceOf(BackendUnavailableError);
  });

  it("falls back to the fake with allowFake: true", async () => {
    registerBackend("docker", false);
    registerBackend("e2b", false);
    registerBackend("modal", false);
    registerBackend("fake", true);
    const sandbox = await createSandbox("auto", { allowFake: true });
    expect(sandbox.backend).toBe("fake");
    await sandbox.kill();
  });

  it("with allowFake: true and nothing usable, the error does not suggest allowFake again", async () => {
    registerBackend("docker", false);
    registerBackend("e2b", false);
    registerBackend("modal", false);
    registerBackend("fake", false);
    const error = await caught(() => createSandbox("auto", { allowFake: true }));
    expect(error).toBeInstanceOf(BackendUnavailableError);
    expect(error.alternatives).toEqual([]);
    expect(error.message).toContain("fake is not running here");
  });

  it("picks the first usable backend in preference order", async () => {
    registerBackend("docker", false);
    registerBackend("e2b", true);
    const onE2b = await createSandbox("auto");
    expect(onE2b.backend).toBe("e2b");
    await onE2b.kill();
    registerBackend("docker", true);
    const onDocker = await createSandbox("auto");
    expect(onDocker.backend).toBe("docker");
    await onDocker.kill();
  });

  it("a registered scheme is used for scheme:// targets, with the part after :// as the target", async () => {
    registerBackend("docker", true);
    const sandbox = await createSandbox("docker://python:3.12-slim");
    expect(sandbox.backend).toBe("docker");
    expect(sandbox.audit().target).toBe("python:3.12-slim");
    await sandbox.kill();
  });
});

describe('"auto" and the caller\'s settings (adr/0035)', () => {
  it("detects with the provider built from the caller's settings and creates with that same provider", async () => {
    const built: Array<{ settings: Record<string, unknown> | undefined; provider: ReturnType<typeof createMemoryProvider> }> = [];
    registerProvider("settings-auto", (settings) => {
      // Usable only with an endpoint, as an adapter that needs its settings to reach its backend would be.
      const usable = typeof settings?.endpoint === "string";
      const provider = createMemoryProvider({
        backend: "settings-auto",
        status: usable
          ? { isolating: true }
          : { usable: false, reason: "no endpoint in settings", remedy: "Pass settings.endpoint.", isolating: true },
      });
      built.push({ settings, provider });
      return {
        ...provider,
        isolating: true,
        settingsSchema: { shape: { endpoint: {} } },
        create: provider.create.bind(provider),
        detect: provider.detect.bind(provider),
      };
    });
    built.length = 0;
    const sandbox = await createSandbox("auto", { backends: ["settings-auto"], settings: { endpoint: "http://127.0.0.1:1" } });
    expect(sandbox.backend).toBe("settings-auto");
    expect(built.map((entry) => entry.settings)).toEqual([{ endpoint: "http://127.0.0.1:1" }]);
    expect(built[0]!.provider.detectCalls).toBe(1);
    expect(built[0]!.provider.drivers.length).toBe(1);
    await sandbox.kill();
  });
});

describe("a BackendUnavailableError from another copy of @sbx/core (adr/0035)", () => {
  /** What a second install of @sbx/core throws: the shared marker and code, but not this copy's class. */
  class ForeignBackendUnavailableError extends Error {
    readonly code = "SBX_BACKEND_UNAVAILABLE";
    readonly retryable = true;
    readonly remedy = "Start the foreign daemon.";
    constructor(message: string) {
      super(message);
      Object.defineProperty(this, Symbol.for("sbx.error"), { value: true });
    }
  }

  it("is recognised by its marker and code: detectBackends keeps its remedy", async () => {
    registerProvider("foreign-unavailable", () => ({
      ...createMemoryProvider({ backend: "foreign-unavailable" }),
      detect: async () => {
        throw new ForeignBackendUnavailableError("the foreign daemon is not running");
      },
    }));
    const status = (await detectBackends()).find((entry) => entry.backend === "foreign-unavailable")!;
    expect(status.usable).toBe(false);
    expect(status.reason).toBe("the foreign daemon is not running");
    expect(status.remedy).toBe("Start the foreign daemon.");
  });
});
