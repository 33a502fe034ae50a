/**
 * Commands through the sbx agent, held to this backend's kill (ADR 0051). A Pod cannot rely on audit tags (the
 * loginuid Docker's kills find): the agent reports each command's process id when it started it (the command's shell,
 * leader of its own session), core hands it here under the command's tag, and `killTagged` runs the verified
 * process-tree kill on that id in a separate exec, which is exactly the kill a command started by its own exec gets.
 * The ids live on the host, never in the Pod, so a command cannot redirect its own kill.
 */
import { randomInt } from "node:crypto";
import { ProviderError } from "@sbx/core";

/** A fresh tag: a decimal string, unique among the commands this driver tracks. */
export function newCommandTag(): string {
  return String(randomInt(1, 2 ** 47));
}

/** What `CommandProcesses` needs from the driver. */
export interface CommandProcessesOptions {
  readonly sandboxId: string;
  /** Runs the verified kill of process `processId`'s tree in the Pod; rejects typed when it cannot verify. */
  readonly killTree: (processId: number) => Promise<void>;
  /** Ends the sandbox (a kill that cannot be verified ends it, as on Docker) and returns the error to report. */
  readonly endSandbox: (reason: string) => Promise<Error>;
}

/** Each running command's process id by tag; the kill by tag. */
export class CommandProcesses {
  private readonly processIds = new Map<string, number>();
  /** Tags of commands that ended or were killed: a later `started` for them is ignored. */
  constructor(private readonly options: CommandProcessesOptions) {}

  /** The agent started the command tagged `tag` as `processId`. */
  readonly started = (tag: string, processId: number): void => {
    if (Number.isSafeInteger(processId) && processId > 1) this.processIds.set(tag, processId);
  };

  /** The command tagged `tag` ended: its id may be reused by another process, so it is forgotten. */
  readonly ended = (tag: string): void => {
    this.processIds.delete(tag);
  };

  /** How many commands are tracked (for tests). */
  get size(): number {
    return this.processIds.size;
  }

  /**
   * Kills the tree of the command tagged `tag` and resolves once the kill verified nothing of it is alive. A tag whose
   * process id never arrived (the agent was lost between starting the command and saying so) cannot be killed
   * verifiably: the sandbox is ended and its lost-sandbox error thrown, never a kill reported that did not happen.
   */
  readonly killTagged = async (tag: string): Promise<void> => {
    const processId = this.processIds.get(tag);
    if (processId === undefined) {
      throw await this.options.endSandbox(
        "the sbx agent was lost before it reported a command's process id, so the command could not be killed verifiably",
      );
    }
    await this.options.killTree(processId);
  };

  /** Whether `tag` is tracked (the kill would find its process). */
  has(tag: string): boolean {
    return this.processIds.has(tag);
  }
}

/** The error of a verified kill that found survivors. */
export function killNotVerifiedError(sandboxId: string, detail: string): ProviderError {
  return new ProviderError({
    backend: "k8s",
    message: `The process-tree kill in the Pod could not verify the kill (sandbox ${sandboxId}): ${detail.slice(0, 500)}`,
  });
}
