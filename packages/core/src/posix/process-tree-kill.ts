/**
 * The process-tree kill of core's POSIX helper set (ADR 0012, ADR 0020). A command started through
 * `COMMAND_WRAPPER` carries an audit tag (`/proc/self/loginuid`) that no descendant can shed; `KILL_TREE_SCRIPT`,
 * run by a user the sandbox cannot signal (root), stops then kills every process with the tag and verifies none is
 * left; `KILL_USER_SCRIPT` is the fallback for kernels without loginuid. Adapters run these through their own exec.
 */

/**
 * Tags the command with its audit tag (`/proc/self/loginuid`, settable once by an unprivileged process and then
 * immutable, inherited by every descendant), runs it in a new session (`setsid`, when the image has it), and exits
 * with the command's status as soon as the command itself exits, even while background children still hold
 * stdout. Arguments: $1 the command line, $2 the command id, $3 the working directory (a missing one is sh's own
 * error on stderr and exit 126, not an engine error on stdout), $4 the tag.
 */
export const COMMAND_WRAPPER = [
  'echo "$4" 2>/dev/null >/proc/self/loginuid',
  'cd -- "$3" || exit 126',
  // In the foreground, not as an asynchronous list (`&`): a shell without job control starts an asynchronous list with
  // SIGINT and SIGQUIT ignored, and an ignored signal stays ignored in the command and all it runs (adr/0054). The
  // wrapper is its group's leader and the command's shell is not, so `setsid` makes the session without forking.
  'if command -v setsid >/dev/null 2>&1; then setsid sh -c "$1"; else sh -c "$1"; fi',
  "s=$?",
  'exit "$s"',
].join("\n");

/** A fresh audit tag: a positive 31-bit number that is not the kernel's "unset" value. */
export function newCommandTag(): string {
  return String(1_000_000 + (crypto.getRandomValues(new Uint32Array(1))[0]! % 2_000_000_000));
}

/**
 * Kills every process carrying one command's audit tag (`/proc/<pid>/loginuid`). The command wrapper sets the tag
 * once; the kernel never lets an unprivileged process change it again, so a child that calls `setsid`, clears its
 * environment (`env -i`, `execve` with `{}`) or double-forks still carries it. Runs as root (the container keeps
 * CAP_KILL for root only), so sandboxed code cannot kill the helper. Uses only shell builtins (no fork), so it works
 * with the pids limit exhausted. First every matching process is stopped (a stopped process cannot fork), then every
 * one is killed, each phase repeated until a whole scan finds nothing left to do; zombies count as gone. A process in
 * uninterruptible sleep (`D`) that was already sent SIGSTOP counts as stopped: it stops before it next runs its own
 * code, so it cannot fork; and it may never show `T`, as a shell's `vfork` parent waits in `D` for a child that was
 * stopped before its `exec` (dash forks every external command that way), which made the stop phase spin to exit 3.
 * With `$2` (the sandbox user's uid, never 0) it then also stops and kills every process of that uid whose loginuid is
 * still **unset**, except the `pid:starttime` entries listed in `$3` (the sbx agent): a command can ptrace an untagged
 * process of its own uid (sbx's own file execs start untagged) and make it run its code, outside its tag (adr/0030).
 * Exit 0: verified, no matching process is left. Exit 3/4: did not converge. Exit 5: tags cannot be trusted here,
 * either because the kernel has no loginuid or because this helper (started the same way as every command) already
 * has one set, so the command wrapper's tag write failed and nothing carries the tag (an engine started from a login
 * session): finding nothing must not read as "verified". The caller then falls back to `KILL_USER_SCRIPT`.
 * Arguments: $1 the tag (or several, separated by spaces: one exec kills many commands), $2 (optional) the uid whose
 * untagged processes go too, $3 (optional) exempt `pid:starttime`s.
 */
export const KILL_TREE_SCRIPT = [
  "[ -r /proc/self/loginuid ] || exit 5",
  "o=; read o 2>/dev/null </proc/self/loginuid",
  '[ "$o" = 4294967295 ] || exit 5',
  't=" $1 "; u=$2; x=" $3 "',
  // First the tagged processes (inline test, as fast as one tag), then, with $2, the untagged ones of uid $2.
  // g PID: whether the process goes in the second pass (untagged, of uid $u, not exempt). Builtins only.
  "g() {",
  '  l=; read l 2>/dev/null <"/proc/$1/loginuid"',
  '  [ "$l" = 4294967295 ] || return 1',
  '  k=; v=; while read k v r; do [ "$k" = "Uid:" ] && break; done 2>/dev/null <"/proc/$1/status"',
  '  [ "$k" = "Uid:" ] && [ "$v" = "$u" ] || return 1',
  '  q=; read q 2>/dev/null <"/proc/$1/stat" || return 1',
  "  p=$1; set -- ${q##*) }; shift 19",
  '  case "$x" in *" $p:$1 "*) return 1;; esac',
  "  return 0",
  "}",
  "for pass in tagged untagged; do",
  '  [ $pass = untagged ] && [ -z "$u" ] && exit 0',
  '  i=0; w=" "',
  "  while :; do",
  "    f=",
  "    for d in /proc/[0-9]*; do",
  '      if [ $pass = tagged ]; then l=; read l 2>/dev/null <"$d/loginuid"; case "$t" in *" $l "*) ;; *) continue;; esac; else g "${d#/proc/}" || continue; fi',
  '      s=; read s 2>/dev/null <"$d/stat"',
  '      case "${s##*) }" in T*|t*|Z*|X*) continue;; D*) case "$w" in *" ${d#/proc/} "*) continue;; esac;; esac',
  '      kill -STOP "${d#/proc/}" 2>/dev/null || continue',
  "      f=1",
  '      case "$w" in *" ${d#/proc/} "*) ;; *) w="$w${d#/proc/} ";; esac',
  "    done",
  '    [ -z "$f" ] && break',
  "    i=$((i+1)); [ $i -ge 5000 ] && exit 3",
  "  done",
  "  i=0",
  "  while :; do",
  "    f=",
  "    for d in /proc/[0-9]*; do",
  '      if [ $pass = tagged ]; then l=; read l 2>/dev/null <"$d/loginuid"; case "$t" in *" $l "*) ;; *) continue;; esac; else g "${d#/proc/}" || continue; fi',
  '      s=; read s 2>/dev/null <"$d/stat"',
  '      case "${s##*) }" in Z*|X*|"") continue;; esac',
  '      kill -KILL "${d#/proc/}" 2>/dev/null; f=1',
  "    done",
  '    [ -z "$f" ] && break',
  "    i=$((i+1)); [ $i -ge 5000 ] && exit 4",
  "  done",
  "done",
  "exit 0",
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
