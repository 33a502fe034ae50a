import { describeSandboxContract, loopbackNetworkFixture } from "@sbx/contract";
import { createSandboxProvider } from "@sbx/fake";

/** The fake with its full manifest; `removeOutOfBand` loses the sandbox through the fake's fault injector. */
const fake = createSandboxProvider();
const narrowed = createSandboxProvider({ capabilities: { STATEFUL_CODE: false, EGRESS_ALLOWLIST: false, BACKGROUND_COMMANDS: false, STDIN: false, HOST_MOUNTS: false } });
/** What the fake cannot be measured on: it has no processes and no operating-system users (ADR 0029). */
const notApplicable = {
  "isolation.no-inherited-descriptors": "the fake's commands are just-bash scripts inside this Node process: no process is started, so no descriptor is inherited (and there is no /proc to list)",
  "user.root": "the fake has no operating-system users (just-bash has no `id`); its audit record says user \"not applicable\"",
} as const;
describeSandboxContract("fake", () => fake, {
  network: loopbackNetworkFixture,
  removeOutOfBand: async (sandbox) => fake.faults.loseSandbox(sandbox.id),
  sandboxExists: async (id) => fake.liveSandboxIds.includes(id),
  skip: notApplicable,
});

/**
 * The fake narrowed to every optional capability off, so each declared-off path (refusals with the right
 * `supportedBy`) is asserted rather than skipped.
 */
describeSandboxContract(
  "fake (every optional capability off)",
  () => narrowed,
  { network: loopbackNetworkFixture, sandboxExists: async (id) => narrowed.liveSandboxIds.includes(id), skip: notApplicable },
);
