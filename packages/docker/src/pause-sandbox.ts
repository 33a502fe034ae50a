import { AbortedError, ProviderError } from "@sbx/core";
import { withinTime } from "@sbx/core/adapter";
import type Docker from "dockerode";
import { runArgv } from "./exec-process.js";

/**
 * Stops every process of the caller's uid but itself with one `kill(-1, SIGSTOP)` (ADR 0055): run as the sandbox
 * user, so it reaches exactly the sandbox's processes (sandboxed code has no capability and cannot change uid) and
 * never the deadline, the dead-man's switch or Docker's init (root, or `nobody` for a root sandbox). The kernel sends
 * it to every process in one pass under the task list lock, so no process forked during the pass escapes it. Its
 * result is never trusted: `VERIFY_STOPPED_SCRIPT`, run by another uid, decides. `dash` builtins only.
 */
export const STOP_ALL_SCRIPT = "kill -s STOP -- -1 2>/dev/null; exit 0";

/** Lets every process of the caller's uid run again (`kill(-1, SIGCONT)`), run as the sandbox user at resume. */
export const CONTINUE_ALL_SCRIPT = "kill -s CONT -- -1 2>/dev/null; exit 0";

/**
 * Verifies that every thread of uid `$1` is stopped and stays stopped, run as the container's own user (root, or
 * `nobody` for a root sandbox), which the sandbox can neither signal nor trace. Two scans of every thread
 * (`/proc/<pid>/task/<tid>/status`): each thread of the uid (real or effective) must be stopped (`T`, `t`), dead
 * (`Z`, `X`), or in uninterruptible sleep with SIGSTOP pending (`D`: it stops before it next runs its own code, the
 * vfork parent of ADR 0042). A thread that is not stopped but has SIGSTOP pending is a stop to come (it shows `R`
 * until the loaded CPU runs it): the first scan is repeated, up to 50 times, until every thread is stopped. One with
 * none pending escaped the stop (another process's `SIGCONT` in flight cleared it): exit 3 at once, and the caller
 * sends the stop again. Then the two scans must be identical, context-switch counts included. A scan is not one
 * instant, so a process could continue another after that one was read and stop itself before its own read; but to do
 * so it runs, and a thread that runs, even once, switches context at least once when it stops again. So two identical
 * all-stopped scans mean no thread of the uid ran between them, and none can run afterwards: only a running thread of
 * the uid could continue one (sbx's own helpers run as other uids and do not). Builtins only (no fork: it works at
 * the pids limit). Exit 0: verified. Exit 3: a thread runs (the record names it). Exit 6: something ran between the
 * scans.
 */
export const VERIFY_STOPPED_SCRIPT = [
  "u=$1",
  "scan() {",
  "  r=; bad=; esc=",
  "  for t in /proc/[0-9]*/task/[0-9]*; do",
  "    s=; ru=; eu=; p=; sp=; vc=; nc=",
  "    while read k v w x; do",
  '      case "$k" in',
  "        State:) s=$v;;",
  "        Uid:) ru=$v; eu=$w;;",
  "        SigPnd:) p=$v;;",
  "        ShdPnd:) sp=$v;;",
  "        voluntary_ctxt_switches:) vc=$v;;",
  "        nonvoluntary_ctxt_switches:) nc=$v;;",
  "      esac",
  '    done 2>/dev/null <"$t/status"',
  '    [ "$ru" = "$u" ] || [ "$eu" = "$u" ] || continue',
  '    r="$r ${t#/proc/}:$s:$vc:$nc"',
  '    case "$s" in T|t|Z|X) continue;; esac',
  // Not stopped: a SIGSTOP still pending (bit 19 of SigPnd or ShdPnd) is a stop to come; none is an escape.
  '    case "$p$sp" in *[4567cdef]????|*[4567cdef]????????????????????) pending=1;; *) pending=;; esac',
  '    [ "$s" = D ] && [ -n "$pending" ] && continue',
  '    bad="$bad ${t#/proc/}:$s"',
  '    [ -z "$pending" ] && esc="$esc ${t#/proc/}:$s"',
  "  done",
  "}",
  "i=0",
  "while :; do",
  "  scan",
  '  [ -z "$bad" ] && break',
  '  [ -n "$esc" ] && { echo "running, no stop pending:$esc"; exit 3; }',
  "  i=$((i+1))",
  '  [ $i -ge 50 ] && { echo "running:$bad"; exit 3; }',
  "done",
  '[ -z "$r" ] && { echo "no thread of uid $u"; exit 0; }',
  "first=$r",
  "scan",
  '[ -n "$bad" ] && { echo "running:$bad"; exit 3; }',
  '[ "$first" = "$r" ] || { echo "changed between scans"; exit 6; }',
  'echo "stopped"',
  "exit 0",
].join("\n");

/** How many stop-and-verify rounds a pause gets before it gives up (a fork racing the stop needs a second round at most, normally). */
const PAUSE_ROUNDS = 10;
/** The bound of each helper exec: the kill helper's (ADR 0042). */
const HELPER_TIMEOUT_MS = 10_000;

/** What pausing needs to know about the sandbox. */
export interface PauseTarget {
  /** The container. */
  readonly container: Docker.Container;
  /** The sandbox user (`uid:gid`): the uid whose processes are stopped. */
  readonly commandUser: string;
  /** The container's own user (`uid:gid`): the deadline's, which verifies. */
  readonly deadlineUser: string;
}

/** What the audit record says about how a Docker pause is enforced. */
export const DOCKER_PAUSE_ENFORCEMENT =
  "docker: every process of the sandbox user stopped with SIGSTOP (kill -1 as that uid) and verified stopped by the deadline's uid (two identical scans of every thread, no context switch between them); memory kept; the root deadline and the dead-man's switch run on";

/**
 * Pauses a Docker sandbox (ADR 0055): stop everything of the sandbox uid, verify from the deadline's uid, repeat up
 * to `PAUSE_ROUNDS` times. Throws `ProviderError` when no round verified, `AbortedError` when `signal` fired first;
 * either way after continuing everything again: a sandbox that could not be paused is left running, never half-stopped.
 */
export async function pauseSandbox(target: PauseTarget, signal?: AbortSignal): Promise<{ enforcement: string }> {
  const uid = uidOf(target.commandUser);
  let last = "";
  for (let round = 0; round < PAUSE_ROUNDS; round++) {
    if (signal?.aborted) break;
    const stopped = await helper(target.container, target.commandUser, ["sh", "-c", STOP_ALL_SCRIPT, "sbx-pause"]);
    if (stopped.exitCode !== 0) {
      last = `the stop helper exited with ${stopped.exitCode}: ${stopped.output}`;
      continue;
    }
    const verified = await helper(target.container, target.deadlineUser, ["sh", "-c", VERIFY_STOPPED_SCRIPT, "sbx-pause-verify", uid]);
    if (verified.exitCode === 0) return { enforcement: DOCKER_PAUSE_ENFORCEMENT };
    last = `the check found: ${verified.output.slice(0, 300)}`;
    if (process.env.SBX_DEBUG_PAUSE === "1") process.stderr.write(`sbx pause round ${round + 1}: ${last}\n`);
  }
  await resumeSandbox(target).catch(() => {});
  if (signal?.aborted) throw new AbortedError({ backend: "docker", message: "The pause was aborted by the caller; the sandbox was left running." });
  throw new ProviderError({
    backend: "docker",
    message: `Could not pause the sandbox: its processes were not verified stopped (${last}). It was left running.`,
  });
}

/** Resumes a Docker sandbox: `SIGCONT` to every process of the sandbox uid. Throws `ProviderError` when the helper did not run. */
export async function resumeSandbox(target: PauseTarget): Promise<void> {
  const continued = await helper(target.container, target.commandUser, ["sh", "-c", CONTINUE_ALL_SCRIPT, "sbx-resume"]);
  if (continued.exitCode !== 0)
    throw new ProviderError({
      backend: "docker",
      message: `Could not resume the sandbox: the continue helper exited with ${continued.exitCode} (${continued.output}). It is still paused; try again.`,
    });
}

/** Runs one helper exec, bounded; a timeout or an engine error is exit code -1 with the reason. */
async function helper(container: Docker.Container, user: string, argv: string[]): Promise<{ exitCode: number; output: string }> {
  try {
    const running = runArgv(container, argv, { user, maxOutputBytes: 64 * 1024 });
    running.catch(() => {});
    const result = await withinTime(running, HELPER_TIMEOUT_MS, () => "timed-out" as const);
    if (result === "timed-out") return { exitCode: -1, output: `did not finish within ${HELPER_TIMEOUT_MS} ms` };
    return { exitCode: result.exitCode, output: `${result.stdout.toString("utf8")}${result.stderr}`.trim().slice(0, 500) };
  } catch (error) {
    return { exitCode: -1, output: error instanceof Error ? error.message : String(error) };
  }
}

/** The uid of a `uid:gid` user string. */
function uidOf(user: string): string {
  return user.split(":")[0] ?? user;
}
