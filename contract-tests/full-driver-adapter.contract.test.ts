import { access, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describeSandboxContract, loopbackNetworkFixture } from "@sbx/contract";
import { createExampleProvider } from "./fixtures/full-driver-adapter/example-provider.js";

/**
 * Compatibility (ADR 0020): an adapter written against the full `SandboxDriverV1` of sbx 0.1 (it implements `list`,
 * `stat`, `remove`, `mkdir` and `rename` itself, and adds its own PATH) runs unchanged and passes the whole suite.
 */
const root = join(tmpdir(), "sbx-full-driver-adapter");

describeSandboxContract("full-driver (sbx 0.1 shape)", () => createExampleProvider({ root }), {
  network: loopbackNetworkFixture,
  timeoutMs: 90_000,
  removeOutOfBand: async (sandbox) => rm(join(root, sandbox.id), { recursive: true, force: true }),
  // The backend's resource is the sandbox's folder.
  sandboxExists: async (id) =>
    access(join(root, id)).then(
      () => true,
      () => false,
    ),
  skip: {
    "lost-sandbox.mid-command":
      "the adapter's commands are host processes that outlive their folder: it learns of the loss only when the command ends",
    "lost-sandbox.lifetime-ends":
      "the frozen 0.1 copy removes an expired sandbox's folder but leaves its running commands (host processes) alone, so they end with a result; the rule came with ADR 0023 (the example adapter follows it)",
    "lost-sandbox.ended-without-a-call":
      "the 0.1 shape has no probe(), so core cannot ask whether the sandbox still exists without a call; a failed call still finds the loss (lost-sandbox.every-call) and ends it (ADR 0045; the example adapter has probe() and runs the test)",
    "file-races.non-utf8-names":
      "the frozen 0.1 copy's own file methods name files with Node's string paths (UTF-8), so a name that is not UTF-8 cannot be made or named; the rule came with ADR 0031 (the example adapter follows it)",
    "file-races.read-flip":
      "the frozen 0.1 copy's own readFile checks the path and then opens it (the 0.1 shape's check-then-act), so a flip can win the race (seen 1 of 40 under load); core's helper, which the example adapter uses, is race-free (ADR 0031)",
    "file-races.write-flip":
      "the frozen 0.1 copy's own writeFile opens with O_NOFOLLOW but never re-checks the parent, so a parent flipped into a link can win (seen under load); core's helper, which the example adapter uses, is race-free (ADR 0031)",
    "policy.missing-cwd":
      "the frozen 0.1 copy spawns with the cwd as the process's working directory, so a missing one fails the spawn (ENOENT); the rule came with ADR 0020 (the example adapter follows it)",
  },
});
