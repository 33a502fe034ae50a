import type Docker from "dockerode";
import { runArgv } from "./exec-process.js";

/** The user every enforcement exec runs as: root, which sandboxed code (uid 10001, no capabilities) can neither signal nor trace. */
export const ENFORCEMENT_USER = "0:0";

/**
 * Kills every process carrying one command's audit tag (`/proc/<pid>/loginuid`). The command wrapper sets the tag
 * once; the kernel never lets an unprivileged process change it again, so a child that calls `setsid`, clears its
 * environment (`env -i`, `execve` with `{}`) or double-forks still carries it. Runs as root (the container keeps
 * CAP_KILL for root only), so sandboxed code cannot kill the helper. Uses only shell builtins (no fork), so it works
 * with the pids limit exhausted. First every tagged process is stopped (a stopped process cannot fork), then every
 * one is killed, each phase repeated until a whole scan finds nothing left to do; zombies count as gone.
 * Exit 0: verified, no tagged process is left. Exit 3/4: did not converge. Exit 5: the kernel has no loginuid.
 * Argument: $1 the tag.
 */
export const KILL_TREE_SCRIPT = [
  "[ -r /proc/self/loginuid ] || exit 5",
  't=$1; i=0',
  "while :; do",
  "  f=",
  "  for d in /proc/[0-9]*; do",
  '    l=; read l 2>/dev/null <"$d/loginuid"; [ "$l" = "$t" ] || continue',
  '    s=; read s 2>/dev/null <"$d/stat"',
  '    case "${s##*) }" in T*|t*|Z*|X*) continue;; esac',
  '    kill -STOP "${d#/proc/}" 2>/dev/null && f=1',
  "  done",
  '  [ -z "$f" ] && break',
  "  i=$((i+1)); [ $i -ge 5000 ] && exit 3",
  "done",
  "i=0",
  "while :; do",
  "  f=",
  "  for d in /proc/[0-9]*; do",
  '    l=; read l 2>/dev/null <"$d/loginuid"; [ "$l" = "$t" ] || continue',
  '    s=; read s 2>/dev/null <"$d/stat"',
  '    case "${s##*) }" in Z*|X*|"") continue;; esac',
  '    kill -KILL "${d#/proc/}" 2>/dev/null; f=1',
  "  done",
  '  [ -z "$f" ] && exit 0',
  "  i=$((i+1)); [ $i -ge 5000 ] && exit 4",
  "done",
].join("\n");

/**
 * Kills every process of one uid except the helper itself (`kill -9 -1` as that uid: one system call the sandbox
 * cannot interleave with), then checks none is left. Used when the kernel has no loginuid to tag commands with.
 * Exit 0: verified. Exit 4: processes of the uid survived. Argument: $1 the uid.
 */
export const KILL_USER_SCRIPT = [
  "i=0",
  "while :; do",
  "  f=",
  "  for d in /proc/[0-9]*; do",
  '    [ "${d#/proc/}" = "$$" ] && continue',
  '    s=; read s 2>/dev/null <"$d/status" || continue',
  '    u=; while read k v rest; do [ "$k" = "Uid:" ] && { u=$v; break; }; done <"$d/status"',
  '    [ "$u" = "$1" ] || continue',
  '    z=; while read k v rest; do [ "$k" = "State:" ] && { z=$v; break; }; done <"$d/status"',
  '    [ "$z" = Z ] && continue',
  '    kill -KILL "${d#/proc/}" 2>/dev/null; f=1',
  "  done",
  '  [ -z "$f" ] && exit 0',
  "  i=$((i+1)); [ $i -ge 5000 ] && exit 4",
  "done",
].join("\n");

/** What a kill attempt established. */
export type KillOutcome = { readonly verified: true } | { readonly verified: false; readonly reason: string };

function within<Value>(promise: Promise<Value>, milliseconds: number): Promise<Value | "timed-out"> {
  let timer: NodeJS.Timeout;
  return Promise.race([promise, new Promise<"timed-out">((resolve) => (timer = setTimeout(() => resolve("timed-out"), milliseconds)))]).finally(() => clearTimeout(timer));
}

/**
 * Kills one command's whole tree by its tag, as root, and reports whether the kill was verified. Never throws:
 * an engine error, a helper that does not finish within `timeoutMs`, or a scan that did not converge is an
 * unverified outcome with the reason; the caller escalates.
 */
export async function killTaggedTree(container: Docker.Container, options: { tag: string; commandUid: string; timeoutMs: number }): Promise<KillOutcome> {
  try {
    const tagged = runArgv(container, ["sh", "-c", KILL_TREE_SCRIPT, "sbx-kill", options.tag], { user: ENFORCEMENT_USER, maxOutputBytes: 4096 });
    tagged.catch(() => {});
    const result = await within(tagged, options.timeoutMs);
    if (result === "timed-out") return { verified: false, reason: `the kill helper did not finish within ${options.timeoutMs} ms` };
    if (result.exitCode === 0) return { verified: true };
    if (result.exitCode !== 5) return { verified: false, reason: `the kill helper exited with ${result.exitCode}` };
    // No loginuid in this kernel: end every process of the command's user instead (documented in ADR 0012).
    const everyone = runArgv(container, ["sh", "-c", KILL_USER_SCRIPT, "sbx-kill-user", options.commandUid], { user: ENFORCEMENT_USER, maxOutputBytes: 4096 });
    everyone.catch(() => {});
    const fallback = await within(everyone, options.timeoutMs);
    if (fallback === "timed-out") return { verified: false, reason: `the sandbox-wide kill did not finish within ${options.timeoutMs} ms` };
    return fallback.exitCode === 0 ? { verified: true } : { verified: false, reason: `the sandbox-wide kill exited with ${fallback.exitCode}` };
  } catch (error) {
    return { verified: false, reason: `the engine refused the kill helper (${error instanceof Error ? error.message : String(error)})` };
  }
}
