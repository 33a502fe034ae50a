import { randomBytes } from "node:crypto";
import { COMMAND_WRAPPER, shellQuote } from "@sbx/core/adapter";
import { AGENT_LAUNCH_SCRIPT } from "./agent-launch.js";

/**
 * The only script on the `container exec` command line: it reads a shell script from stdin up to a line equal to
 * `$1` (a random end marker) and runs it; the rest of stdin is the command's. So the command, its environment and its
 * secrets never appear in the host's process list, and no `exec -e` is used (the CLI appends `-e` keys to the init
 * environment without removing the old entry, so a non-shell program would see the old value). `read` takes one
 * byte at a time from a pipe, so it never consumes the command's own input.
 */
export const STDIN_SCRIPT_READER = ['s=; while IFS= read -r l; do [ "$l" = "$1" ] && break; s="$s$l', '"; done; eval "$s"'].join("\n");

/** A script for `STDIN_SCRIPT_READER` and its end marker. */
export interface StdinScript {
  readonly marker: string;
  readonly text: string;
}

/**
 * The header sent on stdin before the command's own input: `exec env -i <the whole environment> sh -c
 * <COMMAND_WRAPPER> …`, which tags the command with `tag` (an audit tag the root kill helper finds; empty for none),
 * enters `cwd` (exit 126 when missing) and exits with the command's status.
 */
export function commandScript(options: {
  command: string;
  cwd: string;
  env: Readonly<Record<string, string>>;
  tag: string;
  commandId: string;
}): StdinScript {
  return stdinScript(environmentPrefix(options.env), [
    "sh -c",
    shellQuote(COMMAND_WRAPPER),
    "sbx",
    shellQuote(options.command),
    shellQuote(options.commandId),
    shellQuote(options.cwd),
    shellQuote(options.tag),
  ]);
}

/**
 * The header that starts the sbx sandbox agent (adr/0052): `exec env -i <the whole environment> sh -c
 * <AGENT_LAUNCH_SCRIPT> …`, which sets no audit tag, announces the agent's pid and start time on stderr, enters `cwd`
 * and `exec`s the agent's command line. The command line (the agent's source, about 53 KB) follows the end marker as
 * exactly its byte count, read by `head -c` (which never reads past its count) rather than by the reader's `read`,
 * which takes one byte per system call (about 270 ms for the source here). The rest of stdin is the agent's protocol
 * stream.
 */
export function agentScript(options: { agentCommand: string; cwd: string; env: Readonly<Record<string, string>> }): StdinScript {
  const length = Buffer.byteLength(options.agentCommand, "utf8");
  const header = stdinScript(
    [
      `c=$(head -c ${length} && echo .) || { echo "sbx-agent: head is needed to start the agent" >&2; exit 1; }; c=\${c%.};`,
      ...environmentPrefix(options.env),
    ],
    ["sh -c", shellQuote(AGENT_LAUNCH_SCRIPT), "sbx-agent", '"$c"', shellQuote(options.cwd)],
  );
  return { marker: header.marker, text: `${header.text}${options.agentCommand}` };
}

/** `exec env -i` and the quoted assignments: the process gets exactly `env`, nothing of the exec's own environment. */
function environmentPrefix(env: Readonly<Record<string, string>>): string[] {
  return ["exec env -i", ...Object.entries(env).map(([key, value]) => shellQuote(`${key}=${value}`))];
}

/** One line of words and a random end marker that no line of it equals. */
function stdinScript(prefix: readonly string[], words: readonly string[]): StdinScript {
  const line = [...prefix, ...words].join(" ");
  let marker = `#sbx-end-${randomBytes(12).toString("hex")}`;
  while (line.split("\n").includes(marker)) marker = `#sbx-end-${randomBytes(12).toString("hex")}`;
  return { marker, text: `${line}\n${marker}\n` };
}
