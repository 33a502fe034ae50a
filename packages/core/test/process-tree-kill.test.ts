import { spawnSync } from "node:child_process";
import { describe, expect, it } from "vitest";
import { KILL_TREE_SCRIPT, newCommandTag } from "../src/adapter.ts";
import { ownLoginuid, UNSET_LOGINUID } from "./support/loginuid.ts";

// KILL_TREE_SCRIPT reports "verified" (exit 0) only when tags can be trusted: a helper that already has a loginuid
// (an engine started from a login session, where every exec inherits one and the command wrapper's tag write
// fails) must say so (exit 5, the caller falls back to killing by user), never "nothing tagged is left".

const loginuid = ownLoginuid();

describe.skipIf(loginuid === null)("KILL_TREE_SCRIPT", () => {
  it("refuses to verify (exit 5) when the helper's own loginuid is already set, as every command's then is", () => {
    // The child sets its own loginuid first when it is unset (allowed once), reproducing an engine whose
    // processes start with one; when this test process already has one, the write fails and it is set anyway.
    const script = `echo 4242 2>/dev/null >/proc/self/loginuid; exec sh -c "$1" sbx-kill "$2"`;
    const result = spawnSync("sh", ["-c", script, "sbx-test", KILL_TREE_SCRIPT, newCommandTag()], { encoding: "utf8" });
    expect(result.status).toBe(5);
  });

  it.skipIf(loginuid !== UNSET_LOGINUID)("verifies (exit 0) when loginuid is unset and no process carries the tag", () => {
    const result = spawnSync("sh", ["-c", KILL_TREE_SCRIPT, "sbx-kill", newCommandTag()], { encoding: "utf8" });
    expect(result.status).toBe(0);
  });
});
