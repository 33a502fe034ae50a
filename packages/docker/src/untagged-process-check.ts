import type Docker from "dockerode";
import { runArgv } from "./exec-process.js";
import { ENFORCEMENT_USER } from "./kill-process-tree.js";

/**
 * Lists, as `pid:starttime` lines, every live process a command could have ptraced and made run its code outside its
 * audit tag (adr/0036): loginuid still **unset**, **dumpable** (its `/proc/<pid>/stat` is owned by the process's uid,
 * not by root, which is what the kernel shows for a non-dumpable task), and real, effective and saved uid and gid all
 * equal to the sandbox user's (the kernel's ptrace access check without CAP_SYS_PTRACE). sbx's own untagged processes
 * are outside that set for good (the file helper runs under its own gid, ADR 0031; the agent is non-dumpable, ADR
 * 0025) except in the moment between an `execve` and the tag write, which no credential can close: a process must be
 * dumpable to open its own `/proc/self/loginuid`. Runs as root, builtins only (no fork: works at the pids limit).
 * Arguments: $1 the sandbox user's uid, $2 its gid.
 */
export const UNTAGGED_PROCESS_SCAN_SCRIPT = [
  "u=$1; g=$2",
  "for d in /proc/[0-9]*; do",
  // (loginuid has no trailing newline: \`read\` returns non-zero though it read the value.)
  '  l=; read l 2>/dev/null <"$d/loginuid"',
  '  [ "$l" = 4294967295 ] || continue',
  '  [ -O "$d/stat" ] && continue',
  "  U=; G=",
  '  while read k a b c r; do case "$k" in Uid:) U="$a $b $c";; Gid:) G="$a $b $c"; break;; esac; done 2>/dev/null <"$d/status"',
  '  [ "$U" = "$u $u $u" ] && [ "$G" = "$g $g $g" ] || continue',
  '  s=; read s 2>/dev/null <"$d/stat" || continue',
  "  p=${d#/proc/}; set -- ${s##*) }",
  '  case "$1" in Z*|X*) continue;; esac',
  "  shift 19",
  '  echo "$p:$1"',
  "done",
  "exit 0",
].join("\n");

/** What the check established. */
export type UntaggedCheckOutcome = { readonly verified: true } | { readonly verified: false; readonly reason: string };

const delay = (milliseconds: number) => new Promise((resolve) => setTimeout(resolve, milliseconds));

/** One scan: the `pid:starttime` of each process in the set above; rejects when the scan itself fails. */
export async function scanUntaggedSandboxProcesses(container: Docker.Container, options: { uid: string; gid: string }): Promise<string[]> {
  const result = await runArgv(container, ["sh", "-c", UNTAGGED_PROCESS_SCAN_SCRIPT, "sbx-untagged-scan", options.uid, options.gid], {
    user: ENFORCEMENT_USER,
    maxOutputBytes: 1024 * 1024,
  });
  if (result.exitCode !== 0) throw new Error(`the untagged-process scan exited with ${result.exitCode}`);
  const lines = result.stdout.toString("latin1").split("\n").filter(Boolean);
  if (lines.some((line) => !/^\d+:\d+$/.test(line))) throw new Error("the untagged-process scan printed something that is not pid:starttime");
  return lines;
}

/**
 * After a command's verified tag kill: verifies that no process the command could have hijacked outside its tag is
 * alive (adr/0036). Processes found by the first scan may be sbx's own in the moment before their tag write (a command
 * starting, the agent's start-up); they are scanned again, with growing pauses, until none of them is still untagged,
 * dumpable and of the sandbox user. One still there after `timeoutMs` (a hijacked process, or one a command stopped
 * in that moment) makes the outcome unverified: the caller ends the sandbox. Never throws.
 */
export async function verifyNoUntaggedEscape(
  container: Docker.Container,
  options: { uid: string; gid: string; timeoutMs: number },
): Promise<UntaggedCheckOutcome> {
  const started = Date.now();
  try {
    const first = new Set(await scanUntaggedSandboxProcesses(container, options));
    let pause = 50;
    while (first.size > 0) {
      if (Date.now() - started > options.timeoutMs) {
        return {
          verified: false,
          reason: `${first.size} untagged process(es) of the sandbox user that a command could have ptraced (${[...first].join(", ")}, pid:starttime) stayed alive for ${options.timeoutMs} ms after the command's kill`,
        };
      }
      await delay(pause);
      pause = Math.min(pause * 2, 1000);
      const now = new Set(await scanUntaggedSandboxProcesses(container, options));
      for (const entry of first) if (!now.has(entry)) first.delete(entry);
    }
    return { verified: true };
  } catch (error) {
    return { verified: false, reason: `the untagged-process check failed (${error instanceof Error ? error.message : String(error)})` };
  }
}

/** How long processes found untagged after a kill may take to tag themselves (or end) before the sandbox is ended. */
export const UNTAGGED_GRACE_MS = 5000;

/**
 * The check after a verified tag kill, for a sandbox whose commands run as `commandUser` (`uid:gid`): verified at once
 * for root sandboxes (root's untagged processes are sbx's own enforcement, under another uid, ADR 0033).
 */
export function verifyAfterTagKill(container: Docker.Container, commandUser: string): Promise<UntaggedCheckOutcome> {
  const [uid = "", gid = uid] = commandUser.split(":");
  if (uid === "0" || uid === "") return Promise.resolve({ verified: true });
  return verifyNoUntaggedEscape(container, { uid, gid, timeoutMs: UNTAGGED_GRACE_MS });
}
