/**
 * The sbx sandbox agent's own `container exec` (adr/0052, as Docker's adr/0025). Unlike a command it sets no audit
 * tag: the agent keeps its loginuid unset so that every command it starts can set its own, and the root kill helper
 * finds agent-path commands by their tags exactly as it finds exec-path ones. Before anything else the shell announces
 * its pid and start time on stderr (the agent keeps that pid: `exec` all the way), so the agent can be killed by pid as
 * root even if it never says hello. Arguments: $1 the agent's command line, $2 the working directory.
 * The same script as `@sbx/docker`'s `agent-launch.ts` (a candidate for core's POSIX helpers).
 */
export const AGENT_LAUNCH_SCRIPT = [
  "c=$1; w=$2; s=; read s </proc/self/stat; set -- ${s##*) }; shift 19",
  'echo "sbx-agent-pid $$ $1" >&2',
  'cd -- "$w" || exit 126',
  'exec sh -c "$c"',
].join("\n");

/**
 * Kills one process by pid as root, only while it is still the process that was announced (same start time), until
 * it is gone or a zombie. Shell builtins only. Exit 0: gone. Exit 4: it survived. Arguments: $1 pid, $2 start time.
 * The same script as `@sbx/docker`'s.
 */
export const AGENT_PROCESS_KILL_SCRIPT = [
  "p=$1; t=$2; i=0",
  "while :; do",
  '  s=; read s 2>/dev/null <"/proc/$p/stat" || exit 0',
  "  set -- ${s##*) }",
  '  case "$1" in Z*|X*) exit 0;; esac',
  "  shift 19",
  '  [ "$1" = "$t" ] || exit 0',
  '  kill -KILL "$p" 2>/dev/null',
  "  i=$((i+1)); [ $i -ge 5000 ] && exit 4",
  "done",
].join("\n");

/** The agent's announced process: its pid and start time (clock ticks since boot), as `/proc/<pid>/stat` gives them. */
export interface AnnouncedAgent {
  readonly pid: string;
  readonly startTime: string;
}

/** The longest stderr head read while waiting for the announcement line. */
const ANNOUNCE_HEAD_LIMIT = 256;

/**
 * Reads the agent exec's first stderr line (`sbx-agent-pid PID STARTTIME`) and passes everything else through to
 * `forward`. `announced` resolves with the process, or null when the first line was something else (or never came:
 * `giveUp`).
 */
export function agentAnnouncement(forward: (chunk: Uint8Array) => void): {
  readonly onStderr: (chunk: Uint8Array) => void;
  readonly announced: Promise<AnnouncedAgent | null>;
  readonly giveUp: () => void;
} {
  let announce!: (value: AnnouncedAgent | null) => void;
  const announced = new Promise<AnnouncedAgent | null>((resolve) => (announce = resolve));
  let head = "";
  let headDone = false;
  const onStderr = (chunk: Uint8Array) => {
    if (headDone) return forward(chunk);
    head += Buffer.from(chunk).toString("latin1");
    const newline = head.indexOf("\n");
    if (newline < 0 && head.length < ANNOUNCE_HEAD_LIMIT) return;
    headDone = true;
    const match = /^sbx-agent-pid (\d+) (\d+)$/.exec(newline < 0 ? "" : head.slice(0, newline));
    announce(match ? { pid: match[1]!, startTime: match[2]! } : null);
    const rest = match ? head.slice(newline + 1) : head;
    if (rest) forward(Buffer.from(rest, "latin1"));
  };
  return { onStderr, announced, giveUp: () => announce(null) };
}
