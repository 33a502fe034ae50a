import { createKillBatcher, withinTime } from "@sbx/core/adapter";
import type Docker from "dockerode";
import { timeoutError } from "./timeout-error.js";
import { AGENT_PROCESS_KILL_SCRIPT } from "./agent-launch.js";
import { removeQuietly } from "./container-removal.js";
import { runArgv } from "./exec-process.js";
import { ENFORCEMENT_USER, killTaggedTree } from "./kill-process-tree.js";
import type { SandboxLoss } from "./sandbox-lost.js";
import { agentProcessesOf, verifyAfterTagKill } from "./untagged-process-check.js";

/** How long the root kill helper may take before the sandbox is ended instead (it is fork-free and usually takes milliseconds). */
export const KILL_VERIFY_TIMEOUT_MS = 10_000;

/** What the verified kills of one sandbox need. */
export interface KillEscalationOptions {
  /** The sandbox's container. */
  readonly container: Docker.Container;
  /** The `uid:gid` commands run as. */
  readonly commandUser: string;
  /** The sandbox's lost state: a kill that cannot be verified asks it first, and ends the sandbox otherwise. */
  readonly loss: SandboxLoss;
}

/**
 * The verified kills of one Docker sandbox and their escalation: a command's tree by its audit tag, the agent's
 * interpreters by theirs, the agent itself by pid, each run as root by a fork-free helper. A kill that cannot be
 * verified (the helper failed, timed out or saw survivors) ends the whole sandbox through the engine and reports it
 * lost: never a kill reported done that was not.
 */
export class KillEscalation {
  /**
   * The running agents (`pid:starttime`), which a command's kill leaves alive although they carry no tag (adr/0030),
   * shared by every driver of this host process for the container (adr/0036).
   */
  readonly agentProcesses: Set<string>;
  /**
   * A command's verified kill: its tag. The sweep of untagged sandbox-user processes (adr/0030) is off: in the
   * integration CI run it made a fork bomb at the pids limit outlast the kill grace on the agent path.
   */
  readonly killVerified = createKillBatcher((tags) => this.killTags(tags, false, true));
  /** The agent's interpreters' kill: their tag only (the agent's own kill by pid follows; its commands keep theirs). */
  readonly killInterpreters = createKillBatcher((tags) => this.killTags(tags, false, false));

  constructor(private readonly options: KillEscalationOptions) {
    this.agentProcesses = agentProcessesOf(options.container.id);
  }

  /** Ends the sandbox through the engine (kill, then remove, each bounded) and rejects with the lost-sandbox error naming `reason`. */
  readonly endSandbox = async (reason: string): Promise<never> => {
    const { container, loss } = this.options;
    // Execs that end under this kill and ask first must say that sbx ended it, not "ended out of band" (adr/0036).
    const detail = `sbx ended it because ${reason}, so the command's processes could not be verified gone`;
    loss.noteEndedBySbx(detail);
    // Bounded: a stalled engine must not hold kill() forever (the error then still says the sandbox is ended).
    await withinTime(container.kill({ signal: "SIGKILL" }), KILL_VERIFY_TIMEOUT_MS, () =>
      timeoutError("the engine did not answer the container kill"),
    ).catch(() => {});
    await withinTime(removeQuietly(container), KILL_VERIFY_TIMEOUT_MS, () => timeoutError("the engine did not answer the container removal")).catch(
      () => {},
    );
    throw loss.markLost(detail);
  };

  /** Kills the announced agent process by pid as root (only while it is the same process), escalating like the command kill. */
  readonly killAgentProcess = async (pid: string, startTime: string): Promise<void> => {
    const { container, loss } = this.options;
    if (loss.error) throw loss.error;
    const killing = runArgv(container, ["sh", "-c", AGENT_PROCESS_KILL_SCRIPT, "sbx-kill-agent", pid, startTime], {
      user: ENFORCEMENT_USER,
      maxOutputBytes: 4096,
    });
    const outcome = await withinTime(killing, KILL_VERIFY_TIMEOUT_MS, () => timeoutError("the agent kill did not finish")).then(
      (result) => (result.exitCode === 0 ? undefined : `the agent kill exited with ${result.exitCode}`),
      (error: unknown) => `the agent kill failed (${error instanceof Error ? error.message : String(error)})`,
    );
    if (outcome === undefined) return;
    const gone = await loss.lostError().catch(() => undefined);
    if (gone) throw gone;
    return this.endSandbox(outcome);
  };

  /**
   * Kills `tags` and verifies none is left; for a command's kill (`checkUntagged`) also that nothing it could have
   * hijacked outside its tag lives (adr/0036). Not for the agent's interpreters: their kill precedes the agent's own
   * kill by pid, and a replacement agent not yet announced is untagged too (the check would wait on it, and its 5 s
   * stretched the replacement of a stopped agent past the test's look; ADR 0030's sweep was for command kills only
   * for the same reason).
   */
  private async killTags(tags: readonly string[], sweepUntagged: boolean, checkUntagged: boolean): Promise<void> {
    const { container, loss } = this.options;
    if (loss.error) throw loss.error;
    const outcome = await killTaggedTree(container, {
      tag: tags.join(" "),
      commandUid: this.options.commandUser.split(":")[0]!,
      timeoutMs: KILL_VERIFY_TIMEOUT_MS,
      exempt: [...this.agentProcesses],
      sweepUntagged,
    }).then((tagged) =>
      tagged.verified && checkUntagged
        ? verifyAfterTagKill(container, { commandUser: this.options.commandUser, agents: this.agentProcesses })
        : tagged,
    );
    if (outcome.verified) return;
    const gone = await loss.lostError().catch(() => undefined);
    if (gone) throw gone;
    return this.endSandbox(outcome.reason);
  }
}
