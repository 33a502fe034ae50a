import type { SpawnedProcess, SpawnRequest } from "../v1/provider.js";

/** Options of `SandboxAgentClient`. */
export interface SandboxAgentClientOptions {
  /** Backend name for error messages, for example `"docker"`. */
  readonly backend: string;
  /** How long the agent may take to say hello after its spawn, and to answer `create_context`, in ms. Default 30000 (a loaded machine is slow). */
  readonly startTimeoutMs?: number;
  /** After an interrupt (timeout, abort), how long a cell may take to stop before its interpreter is killed, in ms. Default 2000. */
  readonly interruptGraceMs?: number;
  /**
   * A ceiling on the output bytes per stream the agent forwards for any run; the rest is dropped inside the sandbox and
   * counted. Default none: the run's own limit applies alone (`CodeRequest.outputLimitBytes`, which core sets from the
   * caller's `outputLimitBytes`, default `DEFAULT_OUTPUT_LIMIT_BYTES`), and a run without one (a caller streaming its
   * output) is forwarded uncut, as a command's output is. Core keeps at most the caller's limit either way.
   */
  readonly outputLimitBytes?: number;
  /**
   * The backend's own enforcement, so that commands through the agent keep it (adr/0025): each command carries an
   * audit tag the backend's verified kill finds, and a SIGKILL exit is checked for the out-of-memory killer. Without
   * it, commands through the agent are killed by the agent itself (verified only within the command's session).
   */
  readonly enforcement?: AgentCommandEnforcement;
  /**
   * Variables the agent's own process gets over core's defaults and beneath its own (the driver's `baseEnvironment`,
   * for example the egress proxy's), so that code run through it sees what a command sees. Default none.
   */
  readonly baseEnvironment?: Readonly<Record<string, string>>;
}

/**
 * What a backend gives the sandbox agent so that commands through it are held to the same rules as the backend's own
 * spawn (adr/0025): verified kills by audit tag, the out-of-memory report, and the lost-sandbox rule.
 */
export interface AgentCommandEnforcement {
  /**
   * Starts the agent itself, like the driver's `spawn` but with the process's audit tag (`/proc/self/loginuid`)
   * left unset, so that each command the agent starts can set its own; `kill()` must end the agent and everything
   * it started for code (the agent tags its interpreters with `SBX_AGENT_INTERPRETER_TAG` when that variable is set).
   */
  spawnAgent(request: SpawnRequest): Promise<SpawnedProcess>;
  /** A fresh audit tag for one command (a decimal number the kernel accepts as a loginuid). */
  newTag(): string;
  /**
   * Kills every process carrying `tag` and resolves only once the backend verified none is left; rejects with a
   * typed error otherwise (the backend escalates, as its own kill does).
   */
  killTagged(tag: string): Promise<void>;
  /**
   * After a command died of a SIGKILL sbx did not send: whether the sandbox's out-of-memory kill counter grew since
   * it was last read (null: unknown). A grown counter does not say the command was the victim (adr/0030).
   */
  outOfMemoryKilled(): Promise<boolean | null>;
  /** The backend's lost-sandbox error when the sandbox is gone (asked after a failure), else undefined. */
  lostError(cause?: unknown): Promise<Error | undefined>;
  /** Variables every command gets beneath its own (Docker: the egress proxy's). Default none. */
  readonly environment?: Readonly<Record<string, string>>;
  /**
   * For a backend that cannot tag processes (a Pod cannot rely on writing `/proc/self/loginuid`): its `killTagged`
   * kills by the command's process id instead (ADR 0051). With this member, core sends no tag to the agent (it asks
   * for `subreaper` instead: the command's shell becomes a child subreaper, so its orphans stay in its tree while it
   * lives), does not require the agent's `command_tags`, and tells the backend each command's process id (the
   * command's shell, leader of its own session, as the agent reported it in `spawned`) under the command's tag, and
   * when the command has ended (its tag is then never killed). Default none: audit tags.
   */
  readonly commandProcesses?: CommandProcessRecord;
}

/** Where a backend that kills by process id keeps each command's process id (`AgentCommandEnforcement.commandProcesses`). */
export interface CommandProcessRecord {
  /** The agent started the command tagged `tag` as process `processId`. */
  started(tag: string, processId: number): void;
  /** The command tagged `tag` has ended (its exit is settled): forget it. */
  ended(tag: string): void;
}

/** A run's extra beyond `CodeRequest`: an output limit for this run. */
export interface AgentRunOptions {
  /** Output bytes per stream forwarded for this run. Default: the request's `outputLimitBytes`. */
  readonly outputLimitBytes?: number;
}

/** `SandboxAgentClientOptions` with its defaults applied. */
export interface AgentClientSettings {
  /** See `SandboxAgentClientOptions.backend`. */
  readonly backend: string;
  /** See `SandboxAgentClientOptions.startTimeoutMs`. */
  readonly startTimeoutMs: number;
  /** See `SandboxAgentClientOptions.interruptGraceMs`. */
  readonly interruptGraceMs: number;
  /** See `SandboxAgentClientOptions.outputLimitBytes`: undefined when there is no ceiling. */
  readonly outputLimitBytes: number | undefined;
  /** See `SandboxAgentClientOptions.enforcement`. */
  readonly enforcement: AgentCommandEnforcement | undefined;
  /** See `SandboxAgentClientOptions.baseEnvironment`: empty without. */
  readonly baseEnvironment: Readonly<Record<string, string>>;
}

/** Default `SandboxAgentClientOptions.startTimeoutMs`. */
export const DEFAULT_AGENT_START_TIMEOUT_MS = 30_000;
/** Default `SandboxAgentClientOptions.interruptGraceMs`. */
export const DEFAULT_INTERRUPT_GRACE_MS = 2_000;

/** Applies the defaults of `SandboxAgentClientOptions`. */
export function agentClientSettings(options: SandboxAgentClientOptions): AgentClientSettings {
  return {
    backend: options.backend,
    startTimeoutMs: options.startTimeoutMs ?? DEFAULT_AGENT_START_TIMEOUT_MS,
    interruptGraceMs: options.interruptGraceMs ?? DEFAULT_INTERRUPT_GRACE_MS,
    outputLimitBytes: options.outputLimitBytes,
    enforcement: options.enforcement,
    baseEnvironment: options.baseEnvironment ?? {},
  };
}
