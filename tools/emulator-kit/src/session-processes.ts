/**
 * Whether any process of a session still runs inside a container: after a command exited, a process of its session
 * left running (a background child) may hold its stdout open, so the output stream may never end by itself.
 */
import type Docker from "dockerode";
import { runExec } from "./docker-exec.js";

/** Counts the processes whose session id is `$1` (POSIX sh, run as root; fields after `comm` in /proc/PID/stat). */
const COUNT_SESSION_SCRIPT = `
session="$1"; count=0
for directory in /proc/[0-9]*; do
  read -r line < "$directory/stat" 2>/dev/null || continue
  rest="\${line##*) }"
  set -- $rest
  if [ "$4" = "$session" ]; then count=$((count + 1)); fi
done
echo "$count"
`;

/** True when some process of session `sessionId` still runs in the container. */
export async function sessionHasProcesses(container: Docker.Container, sessionId: number): Promise<boolean> {
  const result = await runExec(container, { command: ["/bin/sh", "-c", COUNT_SESSION_SCRIPT, "emulator-session", String(sessionId)], user: "root" });
  return Number(result.stdout.toString("utf8").trim()) > 0;
}
