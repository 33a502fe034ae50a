/**
 * The argv of a command's exec, and for a long command the bytes to write first on its stdin. modal@0.11.1 refuses an
 * exec whose arguments add up to more than 65,536 characters (`validateExecArgs`, "Total length of CMD arguments must be
 * less than 65536 bytes (ARG_MAX)") before anything is sent. The sbx agent's command line (its Python source, about
 * 64 KB) sits just under that, so a command longer than `LONG_COMMAND_BYTES` travels on stdin instead (ADR 0061): the
 * argv is a fixed bootstrap that reads exactly that many bytes (`dd`, never one byte of what follows), checks the
 * sentinel line at their end (a header cut short is refused, exit 125, never run in part), and runs the command
 * wrapper on it. The rest of stdin is the command's.
 */
import { COMMAND_WRAPPER } from "./kill-process-tree.js";

/** Commands longer than this, in UTF-8 bytes, go on stdin: half the SDK's argument limit, leaving room for the wrapper. */
export const LONG_COMMAND_BYTES = 32 * 1024;

/** The last line of a command sent on stdin. */
const SENTINEL = "#sbx-command-end";

/** Exit code of the bootstrap when the command on stdin arrived incomplete. */
export const INCOMPLETE_COMMAND_EXIT_CODE = 125;

/**
 * Reads the command (`$1` bytes: the command, a newline, the sentinel), checks and strips the sentinel, then sets the
 * positional parameters the command wrapper expects (`$1` command, `$2` id, `$3` cwd, `$4` stdin mode) and runs it.
 */
const STDIN_BOOTSTRAP = [
  // One read loop of exactly $1 bytes (`iflag=fullblock`, GNU and busybox dd); a dd without it refuses the operand before
  // reading, and then `bs=1` reads byte by byte (about 5 times slower for the agent's 64 KB, measured here).
  'c=$(dd bs="$1" count=1 iflag=fullblock 2>/dev/null) || c=$(dd bs=1 count="$1" 2>/dev/null)',
  `case "$c" in *'${SENTINEL}') ;; *) exit ${INCOMPLETE_COMMAND_EXIT_CODE} ;; esac`,
  `c=\${c%'${SENTINEL}'}`,
  'set -- "$c" "$2" "$3" "$4"',
  "unset c",
  COMMAND_WRAPPER,
].join("\n");

/** What one command's exec needs: its argv, and the bytes to write on its stdin before anything else (or none). */
export interface CommandInvocation {
  readonly argv: string[];
  readonly stdinHeader: Uint8Array | undefined;
}

/** The exec of `command` under the command wrapper: its text in the argv, or on stdin when longer than `LONG_COMMAND_BYTES`. */
export function commandInvocation(options: { command: string; commandId: string; cwd: string; stdin: boolean }): CommandInvocation {
  const stdinMode = options.stdin ? "stdin" : "no-stdin";
  if (Buffer.byteLength(options.command, "utf8") <= LONG_COMMAND_BYTES) {
    return { argv: ["/bin/sh", "-c", COMMAND_WRAPPER, "sbx", options.command, options.commandId, options.cwd, stdinMode], stdinHeader: undefined };
  }
  const header = new TextEncoder().encode(`${options.command}\n${SENTINEL}`);
  return {
    argv: ["/bin/sh", "-c", STDIN_BOOTSTRAP, "sbx", String(header.byteLength), options.commandId, options.cwd, stdinMode],
    stdinHeader: header,
  };
}
