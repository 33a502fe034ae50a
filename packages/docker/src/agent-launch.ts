import { type SpawnedProcess, type SpawnRequest, newCommandTag, withinTime } from "@sbx/core/adapter";
import { spawnCommand, type ExecContext } from "./exec-process.js";

/**
 * Starts the sbx sandbox agent's exec (adr/0025). Unlike a command it does not set an audit tag: the agent keeps its
 * loginuid unset so that every command it starts can set its own, and Docker's root kill helper finds agent-path
 * commands by their tags exactly as it finds exec-path ones. Before anything else the shell announces its pid and
 * start time on stderr (the agent keeps that pid: `exec` all the way), so the agent can be killed by pid as root even
 * if it never says hello. Arguments: $1 the agent's command line, $2 the working directory.
 */
export const AGENT_LAUNCH_SCRIPT = [
  "c=$1; w=$2; s=; read s </proc/self/stat; set -- ${s##*) }; shift 19",
  'echo "sbx-agent-pid $$ $1" >&2',
  'cd -- "$w" || exit 126',
  'exec sh -c "$c"',
].join("\n");

/**
 * Kills one process by pid as root, only while it is still the process that was announced (same start time), until
 * it is gone or a zombie. Uses shell builtins only. Exit 0: gone. Exit 4: it survived. Arguments: $1 pid, $2 start time.
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

/** What starting the agent needs beyond a command's exec context. */
export interface AgentLaunchContext extends ExecContext {
  /** Kills the announced agent process as root (verified), escalating like the command kill when it cannot. */
  readonly killProcess: (pid: string, startTime: string) => Promise<void>;
  /** Ends the sandbox (the engine-level fallback) and rejects with the lost-sandbox error. */
  readonly endSandbox: (reason: string) => Promise<never>;
  /**
   * The running agents, as `pid:starttime`: the only untagged processes of the sandbox user that a command's kill
   * leaves alive (adr/0030). The launch adds its agent once announced and removes it when its exec ends.
   */
  readonly agentProcesses: Set<string>;
}

const ANNOUNCE_TIMEOUT_MS = 10_000;

/**
 * Spawns the agent. Its interpreters carry one audit tag of their own (`SBX_AGENT_INTERPRETER_TAG`, set by the
 * agent's zygote), so `kill()` ends them and everything they started with the verified tag kill, then the agent
 * process by pid; commands the agent started carry their own tags and are killed by the agent client.
 */
export async function spawnAgentProcess(context: AgentLaunchContext, request: SpawnRequest): Promise<SpawnedProcess> {
  const interpreterTag = newCommandTag();
  let announce!: (value: { pid: string; startTime: string } | null) => void;
  const announced = new Promise<{ pid: string; startTime: string } | null>((resolve) => (announce = resolve));
  /** This agent's `pid:starttime` once announced (exempt from command kills while it runs). */
  let agentEntry: string | undefined;
  let head = "";
  let headDone = false;
  const onStderr = (chunk: Uint8Array) => {
    if (headDone) return request.onStderr(chunk);
    head += Buffer.from(chunk).toString("latin1");
    const newline = head.indexOf("\n");
    if (newline < 0 && head.length < 256) return;
    headDone = true;
    const match = /^sbx-agent-pid (\d+) (\d+)$/.exec(newline < 0 ? "" : head.slice(0, newline));
    announce(match ? { pid: match[1]!, startTime: match[2]! } : null);
    if (match) {
      agentEntry = `${match[1]}:${match[2]}`;
      context.agentProcesses.add(agentEntry);
    }
    const rest = match ? head.slice(newline + 1) : head;
    if (rest) request.onStderr(Buffer.from(rest, "latin1"));
  };
  let spawned: SpawnedProcess | undefined;
  const kill = async (): Promise<void> => {
    // Interpreters and whatever they started (setsid, env -i, double forks keep the tag), verified.
    await context.killVerified(interpreterTag);
    const exited = spawned
      ? spawned.exit.then(
          () => "exited" as const,
          () => "exited" as const,
        )
      : new Promise<never>(() => {});
    const known = await withinTime(Promise.race([announced, exited]), ANNOUNCE_TIMEOUT_MS, () => "timeout" as const);
    if (known === "exited") return;
    if (known === "timeout" || known === null) return context.endSandbox("the sbx sandbox agent's exec never said which process it is");
    await context.killProcess(known.pid, known.startTime);
  };
  spawned = await spawnCommand(
    context,
    { ...request, env: { ...request.env, SBX_AGENT_INTERPRETER_TAG: interpreterTag }, onStderr },
    {
      argv: ["sh", "-c", AGENT_LAUNCH_SCRIPT, "sbx-agent", request.command, request.cwd],
      kill,
    },
  );
  const forget = () => {
    announce(null);
    if (agentEntry) context.agentProcesses.delete(agentEntry);
  };
  void spawned.exit.then(forget, forget);
  return spawned;
}
