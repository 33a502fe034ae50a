/**
 * Terminals on Modal (`PTY`, ADR 0054): `exec(argv, { pty: true })`. modal@0.11.1 sends a fixed `pty_info` of 24 rows
 * by 80 columns and has no call to change it, so a terminal of another size, and every resize, is refused with a typed
 * error (a declared difference the contract group checks) instead of being given a size it did not ask for.
 */
import { CapabilityNotSupportedError } from "@sbx/core";
import { backendsSupporting } from "@sbx/core/adapter";

/** The one size a Modal terminal has (modal@0.11.1's `defaultSandboxPTYInfo`). */
export const MODAL_TERMINAL_SIZE = { cols: 80, rows: 24 } as const;

/**
 * Runs a terminal's command in the foreground (so it keeps SIGINT at its default, adr/0054) after recording the
 * wrapper's pid, its process group's id, where `KILL_COMMAND_SCRIPT` finds it; the record goes once the command ended.
 * No `setsid`: the exec is already its terminal's session, and a new session would lose the terminal (Ctrl-C and job
 * control would not reach the command). Arguments: $1 the command line, $2 the command id, $3 the working directory
 * (a missing one is the shell's own error and exit 126).
 */
export const TERMINAL_WRAPPER = [
  'cd -- "$3" || exit 126',
  'echo "$$" > "/tmp/.sbx-$2.pid" 2>/dev/null',
  'sh -c "$1"',
  "s=$?",
  'rm -f "/tmp/.sbx-$2.pid" 2>/dev/null',
  'exit "$s"',
].join("\n");

/** The typed refusal of a size other than Modal's fixed one, naming the backends whose terminals can be resized. */
export function terminalSizeRefusal(asked: string): CapabilityNotSupportedError {
  return new CapabilityNotSupportedError({
    capability: "PTY",
    backend: "modal",
    supportedBy: backendsSupporting("PTY", "modal"),
    detail: `${asked}, but a Modal terminal is fixed at ${MODAL_TERMINAL_SIZE.cols}×${MODAL_TERMINAL_SIZE.rows}: modal@0.11.1 has no resize`,
  });
}
