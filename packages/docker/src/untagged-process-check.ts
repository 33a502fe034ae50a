import type Docker from "dockerode";
import { runArgv } from "./exec-process.js";
import { ENFORCEMENT_USER } from "./kill-process-tree.js";

/**
 * Lists, as `pid:starttime` lines, every live process that may run a command's code outside its audit tag
 * (adr/0036): loginuid still **unset**, and real, effective and saved uid and gid all equal to the sandbox user's
 * (what the kernel's ptrace access check requires without CAP_SYS_PTRACE, and what a process made by a hijacked one
 * keeps), except the `pid:starttime` entries in $3 (the announced sbx agents). Dumpable or not: a hijacked process can
 * make itself non-dumpable. sbx's own untagged processes are outside the set (the file helper runs under its own gid,
 * ADR 0031; the agent is exempt) except in the moment between an exec's start and its tag write, which no credential
 * can close: a process must be dumpable to open its own `/proc/self/loginuid`. Runs as root, builtins only (no fork:
 * works at the pids limit). Arguments: $1 the sandbox user's uid, $2 its gid, $3 exempt `pid:starttime`s
 * (space-separated).
 */
export const UNTAGGED_PROCESS_SCAN_SCRIPT = [
  'u=$1; g=$2; x=" $3 "',
  "for d in /proc/[0-9]*; do",
  // (loginuid has no trailing newline: read returns non-zero though it read the value.)
  '  l=; read l 2>/dev/null <"$d/loginuid"',
  '  [ "$l" = 4294967295 ] || continue',
  "  U=; G=",
  '  while read k a b c r; do case "$k" in Uid:) U="$a $b $c";; Gid:) G="$a $b $c"; break;; esac; done 2>/dev/null <"$d/status"',
  '  [ "$U" = "$u $u $u" ] && [ "$G" = "$g $g $g" ] || continue',
  '  s=; read s 2>/dev/null <"$d/stat" || continue',
  "  p=${d#/proc/}; set -- ${s##*) }",
  '  case "$1" in Z*|X*) continue;; esac',
  "  shift 19",
  '  case "$x" in *" $p:$1 "*) continue;; esac',
  '  echo "$p:$1"',
  "done",
  "exit 0",
].join("\n");

/** What the check established. */
export type UntaggedCheckOutcome = { readonly verified: true } | { readonly verified: false; readonly reason: string };

const delay = (milliseconds: number) => new Promise((resolve) => setTimeout(resolve, milliseconds));

/** One scan: the `pid:starttime` of each process in the set above; rejects when the scan itself fails. */
export async function scanUntaggedSandboxProcesses(
  container: Docker.Container,
  options: { uid: string; gid: string; exempt: readonly string[] },
): Promise<string[]> {
  const argv = ["sh", "-c", UNTAGGED_PROCESS_SCAN_SCRIPT, "sbx-untagged-scan", options.uid, options.gid, options.exempt.join(" ")];
  const result = await runArgv(container, argv, {
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
 * starting, an agent not yet announced); they are scanned again, with growing pauses (the exempt agents read anew
 * each time), until none of them is still in the set. One still there after `timeoutMs` (a hijacked process, or one a command stopped
 * in that moment) makes the outcome unverified: the caller ends the sandbox. Never throws.
 */
export async function verifyNoUntaggedEscape(
  container: Docker.Container,
  options: { uid: string; gid: string; timeoutMs: number; exempt: () => readonly string[] },
): Promise<UntaggedCheckOutcome> {
  const started = Date.now();
  try {
    const first = new Set(await scanUntaggedSandboxProcesses(container, { ...options, exempt: options.exempt() }));
    let pause = 50;
    while (first.size > 0) {
      if (Date.now() - started > options.timeoutMs) {
        return {
          verified: false,
          reason: `${first.size} untagged process(es) of the sandbox user that a command could have ptraced or made (${[...first].join(", ")}, pid:starttime) stayed alive for ${options.timeoutMs} ms after the command's kill`,
        };
      }
      await delay(pause);
      pause = Math.min(pause * 2, 1000);
      const now = new Set(await scanUntaggedSandboxProcesses(container, { ...options, exempt: options.exempt() }));
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
 * The check after a verified tag kill, for a sandbox whose commands run as `commandUser` (`uid:gid`), with the
 * driver's running `agents` (`pid:starttime`) exempt: verified at once for root sandboxes (root's untagged processes
 * are sbx's own enforcement, under another uid, ADR 0033).
 */
export function verifyAfterTagKill(
  container: Docker.Container,
  options: { commandUser: string; agents: ReadonlySet<string> },
): Promise<UntaggedCheckOutcome> {
  const [uid = "", gid = uid] = options.commandUser.split(":");
  if (uid === "0" || uid === "") return Promise.resolve({ verified: true });
  return verifyNoUntaggedEscape(container, { uid, gid, timeoutMs: UNTAGGED_GRACE_MS, exempt: () => [...options.agents] });
}

const agentsByContainer = new Map<string, Set<string>>();

/**
 * The running sbx agents (`pid:starttime`) of one container, shared by every driver of this host process for that
 * container (a driver from `connectSandbox` exempts the agent another driver started). An agent started by another
 * host process is not known here: a kill through this process then finds it untagged and ends the sandbox (adr/0036).
 */
export function agentProcessesOf(containerId: string): Set<string> {
  let agents = agentsByContainer.get(containerId);
  if (!agents) {
    agents = new Set();
    agentsByContainer.set(containerId, agents);
  }
  return agents;
}

/** Drops a container's entry once its sandbox is destroyed, so the map holds only containers that may still run agents. */
export function forgetAgentProcesses(containerId: string): void {
  agentsByContainer.delete(containerId);
}
