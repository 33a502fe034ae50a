import type { Sandbox, SandboxProviderV1 } from "../../src/index.ts";
import { defineCapabilities, type ResolvedCreateOptions, type SandboxDriverV1, createSandboxFromDriver } from "../../src/adapter.ts";

/** The backend name the agent tests over host processes use. */
export const HOST_AGENT_BACKEND = "host-agent-test";

const OPTIONS = {
  network: { egress: "deny" },
  timeoutMs: 60_000,
  env: {},
  secrets: {},
  metadata: {},
  mounts: [],
  user: "default",
  allowFake: false,
  settings: {},
} as unknown as ResolvedCreateOptions;

const provider: SandboxProviderV1 = {
  specificationVersion: "sbx-v1",
  backend: HOST_AGENT_BACKEND,
  packageName: "none",
  capabilities: defineCapabilities({ STATEFUL_CODE: true, RICH_RESULTS: true, STDIN: true, BACKGROUND_COMMANDS: true, languages: ["python"] }),
  isolating: false,
  detect: async () => ({ backend: HOST_AGENT_BACKEND, usable: true, reason: "", remedy: "", isolating: false }),
  create: async () => {
    throw new Error("not used");
  },
};

/** A core sandbox over `driver` (a host-process driver with the agent attached), declaring code, stdin and background commands. */
export function sandboxOverAgentDriver(driver: SandboxDriverV1): Sandbox {
  return createSandboxFromDriver(driver, { provider, target: "", options: OPTIONS });
}
