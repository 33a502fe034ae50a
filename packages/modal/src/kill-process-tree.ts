/**
 * Bash run as root inside the sandbox that kills a command and everything it started. E2B's own kill
 * (`commands.kill`) sends SIGKILL to the command's pid only, so children would survive it.
 *
 * It stops (SIGSTOP) then kills (SIGKILL) every process that descends from the pid, or whose session or
 * process group is led by the pid or by one of its children (which catches children that were re-parented
 * after a double fork, as long as they stayed in the command's session or group). Stopping first means a
 * process cannot fork a new child between the scan and the kill. It rescans until nothing is left (at most
 * 5 rounds). It never signals itself, and never signals a session or group it does not know the command leads.
 */
export const KILL_PROCESS_TREE_SCRIPT = `
root="$1"
[ -n "$root" ] || exit 0
declare -A parent_of session_of group_of
scan() {
  parent_of=(); session_of=(); group_of=()
  for directory in /proc/[0-9]*; do
    read -r line < "$directory/stat" 2>/dev/null || continue
    rest="\${line##*) }"
    set -- $rest
    pid="\${directory#/proc/}"
    parent_of[$pid]="$2"; group_of[$pid]="$3"; session_of[$pid]="$4"
  done
}
targets() {
  local pid walk step leaders
  leaders=" $root "
  for pid in "\${!parent_of[@]}"; do
    [ "\${parent_of[$pid]}" = "$root" ] && leaders="$leaders$pid "
  done
  for pid in "\${!parent_of[@]}"; do
    [ "$pid" = "$$" ] && continue
    [ "$pid" = "$BASHPID" ] && continue
    walk="$pid"
    for step in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28 29 30 31 32; do
      if [ "$walk" = "$root" ]; then echo "$pid"; continue 2; fi
      walk="\${parent_of[$walk]:-0}"
      [ "$walk" -le 1 ] 2>/dev/null && break
    done
    case "$leaders" in *" \${session_of[$pid]} "*|*" \${group_of[$pid]} "*) echo "$pid" ;; esac
  done
}
for round in 1 2 3 4 5; do
  scan
  found="$(targets)"
  [ -z "$found" ] && exit 0
  kill -STOP $found 2>/dev/null
  kill -KILL $found 2>/dev/null
done
exit 0
`;

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
  'if [ "$4" = no-stdin ]; then exec 3</dev/null; else exec 3<&0; fi',
  'if command -v setsid >/dev/null 2>&1; then setsid sh -c "$1" <&3 3<&- & else sh -c "$1" <&3 3<&- & fi',
  "exec 3<&-",
  "c=$!",
  'echo "$c" > "/tmp/.sbx-$2.pid" 2>/dev/null',
  'wait "$c"; s=$?',
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
  '    q=${d#/proc/}',
  '    [ "$q" = "$$" ] && continue',
  `    if grep -qa "${COMMAND_MARKER_VARIABLE}=$1" "$d/environ" 2>/dev/null; then kill -9 "$q" 2>/dev/null && found=1; fi`,
  "  done",
  '  [ -z "$found" ] && break',
  "  i=$((i+1))",
  "done",
  "exit 0",
].join("\n");
