import { ProviderError } from "@sbx/core";
import type Docker from "dockerode";
import { runArgv } from "./exec-process.js";

/**
 * Replaces the container's deadline timer (ADR 0050), run as the deadline's own user (root, or `nobody` for a root
 * sandbox: a uid the sandboxed code can neither signal nor trace nor impersonate). Arguments: $1 the new lifetime in
 * seconds. It finds the deadline shell (PID 1's child running `sbx-deadline`, owned by this uid), starts the new
 * timer first (marked by `SBX_LIFETIME_TIMER=1` in its environment, which only this uid can read), then kills the old
 * timers: the deadline shell's own timer subshell and any earlier marked timer, each shell before its sleep (a sleep
 * killed first would let its shell end the sandbox at once). Prints `deadline <pid>`; exit 3 when there is no deadline.
 */
export const REPLACE_DEADLINE_SCRIPT = `
me=$(id -u)
uid_of() { awk '/^Uid:/ { print $2 }' "/proc/$1/status" 2>/dev/null; }
ppid_of() { awk '/^PPid:/ { print $2 }' "/proc/$1/status" 2>/dev/null; }
deadline=""
for entry in /proc/[0-9]*; do
  pid=\${entry#/proc/}
  [ "$(uid_of "$pid")" = "$me" ] || continue
  if [ "$(ppid_of "$pid")" = 1 ] && tr '\\000' ' ' < "/proc/$pid/cmdline" 2>/dev/null | grep -q ' sbx-deadline '; then deadline=$pid; fi
done
[ -n "$deadline" ] || { echo "sbx: no deadline process owned by uid $me" >&2; exit 3; }
shells=""
for entry in /proc/[0-9]*; do
  pid=\${entry#/proc/}
  [ "$pid" = "$$" ] && continue
  [ "$(uid_of "$pid")" = "$me" ] || continue
  parent=$(ppid_of "$pid")
  comm=$(cat "/proc/$pid/comm" 2>/dev/null)
  if [ "$parent" = "$deadline" ] && [ "$comm" = sh ]; then shells="$shells $pid"; continue; fi
  if [ "$comm" = sh ] && tr '\\000' '\\n' < "/proc/$pid/environ" 2>/dev/null | grep -qx 'SBX_LIFETIME_TIMER=1'; then shells="$shells $pid"; fi
done
children=""
for shell in $shells; do
  for entry in /proc/[0-9]*; do
    pid=\${entry#/proc/}
    [ "$(ppid_of "$pid")" = "$shell" ] && children="$children $pid"
  done
done
SBX_LIFETIME_TIMER=1 setsid sh -c 'if command -v sleep >/dev/null 2>&1; then sleep "$1"; else python3 -c "import sys,time; time.sleep(int(sys.argv[1]))" "$1"; fi; kill -9 "$2"' sbx-lifetime "$1" "$deadline" </dev/null >/dev/null 2>&1 &
for pid in $shells; do kill -9 "$pid" 2>/dev/null; done
for pid in $children; do kill -9 "$pid" 2>/dev/null; done
echo "deadline $deadline"
`;

/**
 * Moves a Docker sandbox's end to `expiresAt` from outside (the sandbox cannot reach the deadline: it runs as another
 * uid without capabilities): replaces the in-container deadline timer with one of the new length, as the deadline's
 * own user. Resolves with the end applied (whole seconds from now, at least one).
 */
export async function replaceDeadline(
  container: Docker.Container,
  options: { readonly deadlineUser: string; readonly expiresAt: string },
): Promise<string> {
  const seconds = Math.max(1, Math.ceil((Date.parse(options.expiresAt) - Date.now()) / 1000));
  const startedAt = Date.now();
  const result = await runArgv(container, ["sh", "-c", REPLACE_DEADLINE_SCRIPT, "sbx-set-lifetime", String(seconds)], {
    user: options.deadlineUser,
    maxOutputBytes: 64 * 1024,
  });
  if (result.exitCode !== 0 || !/^deadline \d+$/m.test(result.stdout.toString("utf8")))
    throw new ProviderError({
      backend: "docker",
      message: `Could not replace the sandbox's deadline (exit ${result.exitCode}): ${result.stderr.slice(0, 300) || "no output"}. Its lifetime is unchanged.`,
    });
  return new Date(startedAt + seconds * 1000).toISOString();
}
