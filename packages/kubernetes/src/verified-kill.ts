/**
 * The kill every process of this backend gets (ADR 0051), built on core's process-tree rule (`KILL_PROCESS_TREE_SCRIPT`'s
 * `scan` and `targets`: every descendant of the process and every member of a session or group it or one of its
 * children leads): freeze the tree, kill it, and verify by rescanning that no live process of it is left (exit 3 naming
 * the survivors otherwise). A killed process that is dead but not yet reaped (state `Z`) counts as gone.
 */
import { KILL_PROCESS_TREE_SCRIPT } from "@sbx/core/adapter";

/** Exit code of the verified kill when processes of the tree survived it. */
export const KILL_NOT_VERIFIED_EXIT_CODE = 3;

/** The point in core's script where its functions end and its kill loop starts. */
const KILL_LOOP_MARKER = "\nfor round in ";

/** Core's `scan` and `targets` functions, without its loop (which exits 0 after five rounds whatever is left). */
function treeFunctions(): string {
  const end = KILL_PROCESS_TREE_SCRIPT.indexOf(KILL_LOOP_MARKER);
  if (end < 0) throw new Error("KILL_PROCESS_TREE_SCRIPT has no kill loop where the Kubernetes adapter expects it");
  return KILL_PROCESS_TREE_SCRIPT.slice(0, end);
}

/**
 * Bash, argument `$1` the process id: freezes its tree (SIGSTOP, rescanning until no target is left running, so nothing
 * forks between a scan and the kill and no orphan is re-parented away while the tree's root still lives), kills it,
 * and verifies by rescanning that nothing of it is alive; exit 0 only then, else 3 naming the survivors.
 */
export const VERIFIED_KILL_SCRIPT = `${treeFunctions()}
state_of() {
  local line rest
  read -r line < "/proc/$1/stat" 2>/dev/null || return 1
  rest="\${line##*) }"
  echo "\${rest%% *}"
}
# Targets in no state listed in $1 (Z: dead, not yet reaped; T and t: stopped).
targets_except() {
  local pid state
  for pid in $(targets); do
    state="$(state_of "$pid")" || continue
    case " $1 " in *" $state "*) continue ;; esac
    echo "$pid"
  done
}
for round in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20; do
  scan
  running="$(targets_except "Z T t")"
  [ -z "$running" ] && break
  kill -STOP $running 2>/dev/null
done
for round in 1 2 3 4 5 6 7 8 9 10; do
  scan
  found="$(targets_except "Z")"
  [ -z "$found" ] && exit 0
  kill -STOP $found 2>/dev/null
  kill -KILL $found 2>/dev/null
  sleep 0.05
done
scan
found="$(targets_except "Z")"
[ -z "$found" ] && exit 0
echo "sbx: processes survived the kill: $(echo $found)" >&2
exit ${KILL_NOT_VERIFIED_EXIT_CODE}
`;

/** The exec argv that kills process `processId`'s tree (verified); it takes no stdin, so it works on every exec protocol. */
export function verifiedKillArgv(processId: number): string[] {
  return ["/bin/bash", "-c", VERIFIED_KILL_SCRIPT, "sbx-kill", String(processId)];
}
