import { KILL_TREE_SCRIPT, KILL_USER_SCRIPT, withinTime } from "@sbx/core/adapter";
import type Docker from "dockerode";
import { runArgv } from "./exec-process.js";

/** The user every enforcement exec runs as: root, which sandboxed code (uid 10001, no capabilities) can neither signal nor trace. */
export const ENFORCEMENT_USER = "0:0";

// KILL_TREE_SCRIPT (kill every process carrying a command's loginuid tag, fork-free, verified) and KILL_USER_SCRIPT
// (the fallback without loginuid) are core's portable copies (@sbx/core/adapter), run here as root.

/** What a kill attempt established. */
export type KillOutcome = { readonly verified: true } | { readonly verified: false; readonly reason: string };

/**
 * Kills one command's whole tree by its tag, and every untagged process of the sandbox user but the `exempt` agents,
 * as root, and reports whether the kill was verified. Never throws:
 * an engine error, a helper that does not finish within `timeoutMs`, or a scan that did not converge is an
 * unverified outcome with the reason; the caller escalates.
 */
export async function killTaggedTree(
  container: Docker.Container,
  options: { tag: string; commandUid: string; timeoutMs: number; exempt?: readonly string[]; sweepUntagged?: boolean },
): Promise<KillOutcome> {
  try {
    // Untagged processes of the sandbox user go too (adr/0030): a command can ptrace one (sbx's file execs start
    // untagged) and run its code there, outside its tag. Only the agents (`exempt`, pid:starttime) are untagged on
    // purpose. Not for root sandboxes: root's untagged processes are sbx's own enforcement (init, the deadline).
    const untagged = options.commandUid === "0" || options.sweepUntagged === false ? [] : [options.commandUid, (options.exempt ?? []).join(" ")];
    const tagged = runArgv(container, ["sh", "-c", KILL_TREE_SCRIPT, "sbx-kill", options.tag, ...untagged], {
      user: ENFORCEMENT_USER,
      maxOutputBytes: 4096,
    });
    tagged.catch(() => {});
    const result = await withinTime(tagged, options.timeoutMs, () => "timed-out" as const);
    if (result === "timed-out") return { verified: false, reason: `the kill helper did not finish within ${options.timeoutMs} ms` };
    if (result.exitCode === 0) return { verified: true };
    if (result.exitCode !== 5) return { verified: false, reason: `the kill helper exited with ${result.exitCode}` };
    // No loginuid in this kernel: end every process of the command's user instead (documented in ADR 0012).
    const everyone = runArgv(container, ["sh", "-c", KILL_USER_SCRIPT, "sbx-kill-user", options.commandUid], {
      user: ENFORCEMENT_USER,
      maxOutputBytes: 4096,
    });
    everyone.catch(() => {});
    const fallback = await withinTime(everyone, options.timeoutMs, () => "timed-out" as const);
    if (fallback === "timed-out") return { verified: false, reason: `the sandbox-wide kill did not finish within ${options.timeoutMs} ms` };
    return fallback.exitCode === 0 ? { verified: true } : { verified: false, reason: `the sandbox-wide kill exited with ${fallback.exitCode}` };
  } catch (error) {
    return { verified: false, reason: `the engine refused the kill helper (${error instanceof Error ? error.message : String(error)})` };
  }
}
