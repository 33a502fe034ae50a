import { access, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describeSandboxContract, loopbackNetworkFixture } from "@sbx/contract";
import { createSandboxProvider } from "@sbx/example-adapter";

// The example adapter's "deny" puts commands in a new network namespace, where the host's loopback does not exist, so
// the loopback fixture's servers are exactly what deny must block; with "allow" commands share the host's namespace.
describeSandboxContract("example", () => createSandboxProvider(), {
  network: loopbackNetworkFixture,
  timeoutMs: 90_000,
  // An operator removing the sandbox: its folder under the provider's default root goes away.
  removeOutOfBand: async (sandbox) => rm(join(tmpdir(), "sbx-example", sandbox.id), { recursive: true, force: true }),
  // The backend's resource is the sandbox's folder.
  sandboxExists: async (id) =>
    access(join(join(tmpdir(), "sbx-example"), id)).then(
      () => true,
      () => false,
    ),
});
