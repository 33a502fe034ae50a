import { SandboxNotFoundError, type SbxError } from "@sbx/core";
import {
  commandExitOutcome,
  KILL_TREE_SCRIPT,
  newCommandTag,
  type DriverAudit,
  type DriverCodeAgent,
  type ProbeAnswer,
  type SandboxDriverV1,
  type SpawnedProcess,
  type SpawnRequest,
} from "@sbx/core/adapter";
import { runCli, startCli, type ContainerCli } from "./container-cli.js";
import { parseContainers } from "./container-output.js";
import { APPLE_CONTAINER_WORKSPACE } from "./container-run-plan.js";
import { commandScript, STDIN_SCRIPT_READER } from "./exec-script.js";
import { mapAppleContainerError } from "./map-apple-container-error.js";

/** How long output may keep arriving after the CLI exited before the exit is reported anyway (a grandchild holding the pipe). */
const OUTPUT_DRAIN_MS = 2_000;
/** How long a killed command's CLI may take to exit once its processes are verified gone, before it is ended on the host. */
const CLI_EXIT_AFTER_KILL_MS = 5_000;
/** The exit code reported for a command ended by sbx's own destroy or a VM stop (SIGKILL). */
const KILLED_EXIT_CODE = 137;
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
}

/**
 * One Apple `container` VM as an sbx driver: every process is a `container exec -i` whose command and environment
 * arrive on stdin (`exec-script.ts`), tagged with an audit tag; a kill is the root kill helper by tag, verified, and
 * when that cannot be verified (a kernel without loginuid, a helper that did not converge) the VM is stopped. Files
 * are core's defaults over `spawn`; code, contexts and rich results are the sbx agent core runs through `spawn`.
 */
export class AppleContainerDriver implements SandboxDriverV1 {
  readonly workspace = APPLE_CONTAINER_WORKSPACE;
  readonly audit: DriverAudit;
  /** Core runs the sbx sandbox agent through `spawn` (commands keep using `spawn`). */
  readonly codeAgent: DriverCodeAgent = {};
  private destroyed: Promise<void> | undefined;
  /** True once the lifetime ended the VM (not a kill sbx was asked for): a command running then is lost, not a result. */
  private expired = false;

  constructor(
    readonly id: string,
    private readonly options: AppleContainerDriverOptions,
  ) {
    this.audit = options.audit;
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

  async spawn(request: SpawnRequest): Promise<SpawnedProcess> {
    const tag = newCommandTag();
    const script = commandScript({ command: request.command, cwd: request.cwd, env: request.env, tag, commandId: tag });
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
        if (this.destroyed || killed) return { exitCode: KILLED_EXIT_CODE };
        const state = await this.probe();
        if (state === "gone") throw this.lost(stderrTail.trim().split("\n").at(-1) ?? "");
        if (/XPC connection error/.test(stderrTail) && code === 1)
          throw this.failure({ exitCode: 1, stdout: "", stderr: stderrTail, stopped: false }, "run a command");
      }
      // A SIGKILL sbx did not send may be the VM ending under the command (deleted, or its lifetime's init exited): core's
      // one exit rule asks probe() and rejects with the loss. The VM's OOM counter is not readable from here (null).
      if (this.expired && code !== 0) throw this.lost("its lifetime ended");
      return commandExitOutcome({
        exitCode: code,
        killRequested: () => killed || this.destroyed !== undefined,
        outOfMemoryCounterGrew: () => Promise.resolve(null),
        lostError: async () => ((await this.probe()) === "gone" ? this.lost("the command was killed as its VM ended") : undefined),
      });
    })();
    let killing: Promise<void> | undefined;
    return {
      pid: tag,
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
          await this.killTagged(tag);
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

  /**
   * Kills every process carrying `tag` with core's root kill helper, verified. When it cannot verify (exit 5: the
   * VM's kernel has no loginuid; 3/4: it did not converge; or the exec failed) the VM is stopped and deleted, which
   * ends every process in it; that is verified by the container being gone.
   */
  async killTagged(tag: string): Promise<void> {
    if (this.destroyed) return this.destroyed;
    const result = await runCli(this.options.cli, ["exec", "--user", "0:0", this.id, "sh", "-c", KILL_TREE_SCRIPT, "sbx-kill", tag], {
      timeoutMs: this.options.requestTimeoutMs,
    });
    if (result.exitCode === 0) return;
    if (result.exitCode === 1 && /not found|is not running/.test(result.stderr) && (await this.probe()) === "gone") return;
    await this.destroy();
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
