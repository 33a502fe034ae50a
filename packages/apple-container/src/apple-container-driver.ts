import { SandboxNotFoundError, type SbxError } from "@sbx/core";
import {
  commandExitOutcome,
  KILL_TREE_SCRIPT,
  createKillBatcher,
  newCommandTag,
  withinTime,
  type DriverAgentEnforcement,
  type DriverAudit,
  type DriverCodeAgent,
  type ProbeAnswer,
  type SandboxDriverV1,
  type SpawnedProcess,
  type SpawnRequest,
} from "@sbx/core/adapter";
import { AGENT_PROCESS_KILL_SCRIPT, agentAnnouncement } from "./agent-launch.js";
import type { AgentCommandsMode } from "./apple-container-settings.js";
import { runCli, startCli, type ContainerCli } from "./container-cli.js";
import { parseContainers } from "./container-output.js";
import { APPLE_CONTAINER_WORKSPACE } from "./container-run-plan.js";
import { agentScript, commandScript, STDIN_SCRIPT_READER, type StdinScript } from "./exec-script.js";
import { mapAppleContainerError } from "./map-apple-container-error.js";

/** How long output may keep arriving after the CLI exited before the exit is reported anyway (a grandchild holding the pipe). */
const OUTPUT_DRAIN_MS = 2_000;
/** How long a killed command's CLI may take to exit once its processes are verified gone, before it is ended on the host. */
const CLI_EXIT_AFTER_KILL_MS = 5_000;
/** The exit code reported for a command ended by sbx's own destroy or a VM stop (SIGKILL). */
const KILLED_EXIT_CODE = 137;
/** How long the agent's exec may take to announce its pid before its kill gives up on it and deletes the VM instead. */
const ANNOUNCE_TIMEOUT_MS = 10_000;
/** A CLI error line on stderr (the CLI's own failure, not the command's output), checked against the container's state. */
const CLI_ERROR_LINE = /(^|\n)Error: [^\n]*(not found|is not running|XPC connection error|failed to find target executable)[^\n]*\n?$/;

/** What `AppleContainerDriver` needs besides its id. */
export interface AppleContainerDriverOptions {
  readonly cli: ContainerCli;
  readonly audit: DriverAudit;
  /** `uid:gid` commands run as. */
  readonly commandUser: string;
  /** Timeout of control calls (inspect, delete, the kill helper). */
  readonly requestTimeoutMs: number;
  /** Called once the sandbox is destroyed (the provider's lifetime timer). */
  readonly onDestroyed?: () => void;
  /** When commands go through the sbx sandbox agent (`settings.agentCommands`, adr/0052). Default `"start"`. */
  readonly agentCommands?: AgentCommandsMode;
}

/**
 * One Apple `container` VM as an sbx driver. The sbx sandbox agent runs in one long-lived `container exec -i`
 * (`spawnAgent`, untagged, announcing its pid), and core sends commands, files, code, terminals and watches through it
 * (`codeAgent` with `enforcement`, adr/0052); every other process is a `container exec -i` of its own whose command
 * and environment arrive on stdin (`exec-script.ts`). Every command on either path carries an audit tag; a kill is the
 * root kill helper by tag, verified, and when that cannot be verified (a kernel without loginuid, a helper that did not
 * converge) the VM is deleted, which is verified by its being gone.
 */
export class AppleContainerDriver implements SandboxDriverV1 {
  readonly workspace = APPLE_CONTAINER_WORKSPACE;
  readonly audit: DriverAudit;
  /** The sbx sandbox agent, which core attaches (ADR 0037): commands through it as `settings.agentCommands` says. */
  readonly codeAgent: DriverCodeAgent;
  /**
   * A command's verified kill by its tag; kills asked in the same turn of the event loop share one root exec (a
   * sandbox killed with many live commands costs one CLI call, not one each).
   */
  private readonly killBatched = createKillBatcher((tags) => this.killTags(tags));
  private destroyed: Promise<void> | undefined;
  /** True once the lifetime ended the VM (not a kill sbx was asked for): a command running then is lost, not a result. */
  private expired = false;
  /** Why sbx itself deleted the VM to end processes it could not verify gone: later calls and other commands are lost. */
  private endedBecause: string | undefined;

  constructor(
    readonly id: string,
    private readonly options: AppleContainerDriverOptions,
  ) {
    this.audit = options.audit;
    const agentCommands = options.agentCommands ?? "start";
    this.codeAgent = {
      commands: agentCommands === "off" ? "driver" : "agent",
      commandsStartAgent: agentCommands === "start",
      enforcement: this.agentEnforcement(),
    };
  }

  /** The CLI path and environment, for the escape hatch (outside the portable contract). */
  get native(): { readonly id: string; readonly cli: ContainerCli } {
    return { id: this.id, cli: this.options.cli };
  }

  private failure(result: Parameters<typeof mapAppleContainerError>[0], operation: string): SbxError {
    return mapAppleContainerError(result, { operation, sandboxId: this.id, timeoutMs: this.options.requestTimeoutMs });
  }

  /** Whether the container still runs, from `container inspect`: stopped or not found is `"gone"`; no answer is `"unknown"`. */
  async probe(options?: { signal?: AbortSignal }): Promise<ProbeAnswer> {
    const result = await runCli(this.options.cli, ["inspect", this.id], { timeoutMs: this.options.requestTimeoutMs, signal: options?.signal });
    if (result.exitCode === 0) {
      const record = parseContainers(result.stdout)?.find((entry) => entry.id === this.id);
      if (!record) return "unknown";
      return record.state === "running" ? "running" : record.state === "stopped" ? "gone" : "unknown";
    }
    return result.exitCode === 1 && /not found/.test(result.stderr) ? "gone" : "unknown";
  }

  private lost(detail: string): SandboxNotFoundError {
    return new SandboxNotFoundError({
      backend: "apple-container",
      sandboxId: this.id,
      message: `The container ${this.id} is gone (stopped, deleted or past its lifetime): ${detail}`,
    });
  }

  /** Starts one command as its own `container exec -i`, tagged; its kill is the verified kill of that tag. */
  async spawn(request: SpawnRequest): Promise<SpawnedProcess> {
    if (this.endedBecause !== undefined) throw this.lost(`sbx deleted it because ${this.endedBecause}`);
    const tag = newCommandTag();
    const script = commandScript({ command: request.command, cwd: request.cwd, env: request.env, tag, commandId: tag });
    return this.startExec(request, script, { pid: tag, killInside: () => this.killTagged(tag) });
  }

  /**
   * Starts the sbx sandbox agent's own `container exec -i` (adr/0052): no audit tag (so each command the agent starts
   * sets its own), its pid and start time announced on stderr first, its interpreters tagged with a tag of their own.
   * Its kill: the interpreters by their tag, then the agent by pid as root while its start time matches, each verified;
   * when that cannot be done the VM is deleted.
   */
  async spawnAgent(request: SpawnRequest): Promise<SpawnedProcess> {
    if (this.endedBecause !== undefined) throw this.lost(`sbx deleted it because ${this.endedBecause}`);
    const interpreterTag = newCommandTag();
    const announcement = agentAnnouncement(request.onStderr);
    const script = agentScript({
      agentCommand: request.command,
      cwd: request.cwd,
      env: { ...request.env, SBX_AGENT_INTERPRETER_TAG: interpreterTag },
    });
    let exited: Promise<unknown> = new Promise<never>(() => {});
    const killInside = async (): Promise<void> => {
      await this.killTagged(interpreterTag);
      const known = await withinTime(
        Promise.race([announcement.announced, exited.then(() => "exited" as const)]),
        ANNOUNCE_TIMEOUT_MS,
        () => "timeout" as const,
      );
      if (known === "exited") return;
      if (known === "timeout" || known === null) {
        // No process to kill by pid. An exec that failed before the launch (the VM gone, no `head`) ran nothing else:
        // its end is enough. A VM already gone holds nothing either; otherwise the VM is deleted.
        if (
          known === null &&
          (await withinTime(
            exited.then(() => true),
            ANNOUNCE_TIMEOUT_MS,
            () => false,
          ))
        )
          return;
        if ((await this.probe()) === "gone") return;
        return this.endSandbox("the sbx sandbox agent's exec never said which process it is");
      }
      await this.killAgentProcess(known.pid, known.startTime);
    };
    const spawned = await this.startExec({ ...request, onStderr: announcement.onStderr }, script, { pid: `agent-${interpreterTag}`, killInside });
    exited = spawned.exit.then(
      () => undefined,
      () => undefined,
    );
    void exited.then(announcement.giveUp);
    return spawned;
  }

  /**
   * Runs `script` through one `container exec -i` as the command user: the script's header first on stdin, then the
   * process's own input. `killInside` ends the process inside the VM (verified); the CLI, which forwards no signal,
   * is ended on the host afterwards if it has not exited by then.
   */
  private async startExec(
    request: SpawnRequest,
    script: StdinScript,
    options: { readonly pid: string; readonly killInside: () => Promise<void> },
  ): Promise<SpawnedProcess> {
    const child = startCli(this.options.cli, [
      "exec",
      "--interactive",
      "--user",
      this.options.commandUser,
      this.id,
      "sh",
      "-c",
      STDIN_SCRIPT_READER,
      "sbx-exec",
      script.marker,
    ]);
    let stderrTail = "";
    child.stdout.on("data", (chunk: Buffer) => request.onStdout(new Uint8Array(chunk)));
    child.stderr.on("data", (chunk: Buffer) => {
      stderrTail = (stderrTail + chunk.toString("latin1")).slice(-1024);
      request.onStderr(new Uint8Array(chunk));
    });
    child.stdin.on("error", () => {});
    const started = new Promise<void>((resolve, reject) => {
      child.once("spawn", () => resolve());
      child.once("error", reject);
    });
    try {
      await started;
    } catch (error) {
      throw this.failure(
        { exitCode: 127, stdout: "", stderr: error instanceof Error ? error.message : String(error), stopped: false },
        "start a command",
      );
    }
    child.stdin.write(script.text);
    if (!request.stdin) child.stdin.end();
    const closed = new Promise<void>((resolve) => child.once("close", () => resolve()));
    const exited = new Promise<number>((resolve) => child.once("exit", (code, signal) => resolve(code ?? (signal ? KILLED_EXIT_CODE : 1))));
    let killed = false;
    const exit = (async () => {
      const code = await exited;
      let drainTimer: NodeJS.Timeout | undefined;
      await Promise.race([closed, new Promise<void>((resolve) => (drainTimer = setTimeout(resolve, OUTPUT_DRAIN_MS)))]);
      clearTimeout(drainTimer);
      child.stdout.destroy();
      child.stderr.destroy();
      if (code !== 0 && CLI_ERROR_LINE.test(stderrTail)) {
        // The CLI's own error (the container vanished, or the service went away), or the command printing such a line:
        // the container's state decides, never the text alone.
        if (this.expired) throw this.lost("its lifetime ended");
        if (this.endedBecause !== undefined && !killed) throw this.lost(`sbx deleted it because ${this.endedBecause}`);
        if (this.destroyed || killed) return { exitCode: KILLED_EXIT_CODE };
        const state = await this.probe();
        if (state === "gone") throw this.lost(stderrTail.trim().split("\n").at(-1) ?? "");
        if (/XPC connection error/.test(stderrTail) && code === 1)
          throw this.failure({ exitCode: 1, stdout: "", stderr: stderrTail, stopped: false }, "run a command");
      }
      // A SIGKILL sbx did not send may be the VM ending under the command (deleted, or its lifetime's init exited): core's
      // one exit rule asks probe() and rejects with the loss. The VM's OOM counter is not readable from here (null).
      if (this.expired && code !== 0) throw this.lost("its lifetime ended");
      if (this.endedBecause !== undefined && !killed && code !== 0) throw this.lost(`sbx deleted it because ${this.endedBecause}`);
      return commandExitOutcome({
        exitCode: code,
        killRequested: () => killed || (this.destroyed !== undefined && this.endedBecause === undefined),
        outOfMemoryCounterGrew: () => Promise.resolve(null),
        lostError: () => this.lostError(),
      });
    })();
    let killing: Promise<void> | undefined;
    return {
      pid: options.pid,
      exit,
      writeStdin: async (data) => {
        if (child.stdin.destroyed || child.stdin.writableEnded) return;
        await new Promise<void>((resolve, reject) => child.stdin.write(data, (error) => (error ? reject(error) : resolve())));
      },
      closeStdin: async () => {
        if (!child.stdin.writableEnded) child.stdin.end();
      },
      kill: () => {
        killing ??= (async () => {
          killed = true;
          await options.killInside();
          let timer: NodeJS.Timeout | undefined;
          const cliExited = await Promise.race([
            exited.then(() => true),
            new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), CLI_EXIT_AFTER_KILL_MS))),
          ]);
          clearTimeout(timer);
          // The processes are verified gone inside the VM; a CLI still waiting (it forwards no signal) is ended here.
          if (!cliExited) child.kill("SIGKILL");
        })();
        return killing;
      },
    };
  }

  /** The lost-sandbox error when the VM is gone (asked after a failure or an unexplained SIGKILL), else undefined. */
  private async lostError(): Promise<SandboxNotFoundError | undefined> {
    return (await this.probe()) === "gone" ? this.lost("the command was killed as its VM ended") : undefined;
  }

  /**
   * Kills every process carrying `tag` with core's root kill helper, verified (kills asked together share one exec).
   * When it cannot verify (exit 5: the VM's kernel has no loginuid; 3/4: it did not converge; or the exec failed) the
   * VM is deleted, which ends every process in it; that is verified by the container being gone.
   */
  killTagged(tag: string): Promise<void> {
    return this.killBatched(tag);
  }

  private async killTags(tags: readonly string[]): Promise<void> {
    if (this.destroyed) return this.destroyed;
    const result = await runCli(this.options.cli, ["exec", "--user", "0:0", this.id, "sh", "-c", KILL_TREE_SCRIPT, "sbx-kill", tags.join(" ")], {
      timeoutMs: this.options.requestTimeoutMs,
    });
    if (result.exitCode === 0) return;
    if (result.exitCode === 1 && /not found|is not running/.test(result.stderr) && (await this.probe()) === "gone") return;
    await this.endSandbox(`the kill helper could not verify the kill (exit ${String(result.exitCode)})`);
  }

  /**
   * Kills the announced agent process by pid as root (only while its start time matches), verified; when that cannot
   * be verified the VM is deleted.
   */
  private async killAgentProcess(pid: string, startTime: string): Promise<void> {
    if (this.destroyed) return this.destroyed;
    const result = await runCli(
      this.options.cli,
      ["exec", "--user", "0:0", this.id, "sh", "-c", AGENT_PROCESS_KILL_SCRIPT, "sbx-kill-agent", pid, startTime],
      {
        timeoutMs: this.options.requestTimeoutMs,
      },
    );
    if (result.exitCode === 0) return;
    if (result.exitCode === 1 && /not found|is not running/.test(result.stderr) && (await this.probe()) === "gone") return;
    await this.endSandbox(`the agent's kill by pid could not be verified (exit ${String(result.exitCode)})`);
  }

  /**
   * Deletes the VM because a kill could not be verified otherwise (that ends every process in it, verified by its
   * being gone); from then on the sandbox is lost: a command that was not itself being killed, and every later call,
   * fails with `SandboxNotFoundError` saying why, never with a result.
   */
  private async endSandbox(reason: string): Promise<void> {
    if (!this.destroyed) this.endedBecause = reason;
    await this.destroy();
  }

  /**
   * What commands through the sandbox agent are held to (adr/0052): the agent's own untagged exec, the verified tag
   * kill (the VM deleted when it cannot be verified), the lost-sandbox rule; the OOM counter is unknown (null), as on
   * the exec path.
   */
  private agentEnforcement(): DriverAgentEnforcement {
    return {
      spawnAgent: (request) => this.spawnAgent(request),
      newTag: newCommandTag,
      killTagged: (tag) => this.killTagged(tag),
      outOfMemoryKilled: () => Promise.resolve(null),
      lostError: () => this.lostError(),
    };
  }

  /** Ends the VM at the end of its lifetime (the host's timer): commands running then fail with `SandboxNotFoundError`. */
  async expire(): Promise<void> {
    if (!this.destroyed) this.expired = true;
    return this.destroy();
  }

  async destroy(): Promise<void> {
    this.destroyed ??= (async () => {
      this.options.onDestroyed?.();
      const result = await runCli(this.options.cli, ["delete", "--force", this.id], { timeoutMs: this.options.requestTimeoutMs });
      if (result.exitCode === 0 || /not found/.test(result.stderr)) return;
      throw this.failure(result, "delete the sandbox");
    })();
    return this.destroyed;
  }
}
