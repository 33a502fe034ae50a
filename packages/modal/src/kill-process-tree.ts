/** Environment variable every process of one command inherits, so the kill can find children that left the group. */
export const COMMAND_MARKER_VARIABLE = "SBX_COMMAND_ID";

/**
 * Runs the command in a new session (`setsid`, when the image has it) so the whole tree has one process group,
 * records that group id under /tmp, and exits with the command's status as soon as the command itself exits, even
 * while background children still hold stdout (Modal's exec wait follows the exec'd process, not the pipe).
 * Arguments: $1 the command line, $2 the command id, $3 the working directory (a missing one is the shell's own
 * error on stderr and exit 126), $4 `stdin` or `no-stdin` (the command then reads /dev/null: Modal keeps an exec's
 * stdin open until EOF is sent, and this saves that call). Otherwise the Docker adapter's wrapper.
 */
export const COMMAND_WRAPPER = [
  'cd -- "$3" || exit 126',
  'if [ "$4" = no-stdin ]; then exec </dev/null; fi',
  // The command's shell records its own pid (its group's id once `setsid` made it a session) and becomes the command.
  // It runs in the foreground, not as an asynchronous list (`&`): a shell without job control starts an asynchronous
  // list with SIGINT and SIGQUIT ignored, and an ignored signal stays ignored in the command (adr/0054).
  `r='echo "$$" > "/tmp/.sbx-$2.pid" 2>/dev/null; exec sh -c "$1"'`,
  'if command -v setsid >/dev/null 2>&1; then setsid sh -c "$r" sbx "$1" "$2"; else sh -c "$r" sbx "$1" "$2"; fi',
  "s=$?",
  'rm -f "/tmp/.sbx-$2.pid" 2>/dev/null',
  'exit "$s"',
].join("\n");

/**
 * Kills a command's whole tree, run as its own exec: stops the command's process group, runs
 * `KILL_PROCESS_TREE_SCRIPT` on the group leader when bash exists (descendants, and sessions or groups the leader or
 * its children lead), kills the group, then kills every process whose environment carries the command's marker
 * (children that called setsid again or double-forked), until none is left. Arguments: $1 the command id,
 * $2 the tree script.
 */
export const KILL_COMMAND_SCRIPT = [
  'p=$(cat "/tmp/.sbx-$1.pid" 2>/dev/null)',
  'if [ -n "$p" ]; then',
  '  kill -STOP -- "-$p" 2>/dev/null',
  '  if command -v bash >/dev/null 2>&1; then bash -c "$2" sbx-kill-tree "$p"; fi',
  '  kill -9 -- "-$p" 2>/dev/null',
  "fi",
  "i=0",
  "while [ $i -lt 50 ]; do",
  "  found=",
  "  for d in /proc/[0-9]*; do",
  "    q=${d#/proc/}",
  '    [ "$q" = "$$" ] && continue',
  `    if grep -qa "${COMMAND_MARKER_VARIABLE}=$1" "$d/environ" 2>/dev/null; then kill -9 "$q" 2>/dev/null && found=1; fi`,
  "  done",
  '  [ -z "$found" ] && break',
  "  i=$((i+1))",
  "done",
  "exit 0",
].join("\n");

/**
 * Exits 0 while any process of a command (its environment carries the command's marker) still runs, else 1: after
 * the command itself exited, whether a background child may still hold its output. Argument: $1 the command id.
 */
export const COMMAND_STILL_RUNS_SCRIPT = [
  "for d in /proc/[0-9]*; do",
  "  q=${d#/proc/}",
  '  [ "$q" = "$$" ] && continue',
  `  if grep -qa "${COMMAND_MARKER_VARIABLE}=$1" "$d/environ" 2>/dev/null; then exit 0; fi`,
  "done",
  "exit 1",
].join("\n");
