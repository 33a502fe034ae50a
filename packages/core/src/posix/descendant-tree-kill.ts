/**
 * Bash run as root inside the sandbox that kills a command and everything it started, for backends whose own kill
 * signals one pid only (E2B's `commands.kill`, Modal). Argument: $1 the command's pid.
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
