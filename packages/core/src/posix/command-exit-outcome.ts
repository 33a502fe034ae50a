import { cancellableDelay } from "../limits/deadline.js";
import { commandOutOfMemoryReport } from "./out-of-memory-probe.js";

/** The exit status of a process killed by SIGKILL (128 + 9): sbx's own kill, the out-of-memory killer, or a sandbox ending. */
export const SIGKILL_EXIT_CODE = 137;

/**
 * How many times an unexplained SIGKILL asks whether the sandbox is gone, and how far apart: a backend notices a
 * sandbox's end a moment after its processes die (Docker's engine reports PID 1's death after the exec's).
 */
export const LOST_SANDBOX_CHECKS = { attempts: 5, intervalMs: 200 } as const;

/** What `commandExitOutcome` is told about one command that exited. */
export interface CommandExitFacts {
  /** The command's exit status (128 + N when a signal N killed it). */
  readonly exitCode: number;
  /** True once sbx asked for the command's kill (read after the OOM check): a SIGKILL exit is then sbx's own, not the OOM killer's nor a lost sandbox's. */
  readonly killRequested: () => boolean;
  /** Whether the sandbox's out-of-memory kill counter grew since it was last read (null: unknown). Asked only after a SIGKILL. */
  readonly outOfMemoryCounterGrew: () => Promise<boolean | null>;
  /** The backend's lost-sandbox error when the sandbox is gone, else undefined. Asked only after an unexplained SIGKILL. */
  readonly lostError: () => Promise<Error | undefined>;
}

/** A command's exit as a result: its status and what sbx can say about the out-of-memory killer. */
export interface CommandExit {
  /** The exit status. */
  readonly exitCode: number;
  /** False when the OOM killer ended nothing while the command ran; null when unknown (adr/0030). */
  readonly outOfMemoryKilled: false | null;
}

/**
 * The one rule for a command's exit on a backend that can read the sandbox's out-of-memory counter (the exec path of
 * Docker and the sandbox agent's commands with `enforcement`, adr/0025): any exit but a SIGKILL is a result that the OOM
 * killer did not cause. A SIGKILL is checked against the OOM counter; a counter that grew makes `outOfMemoryKilled`
 * unknown (it does not name the victim, adr/0030). A SIGKILL that neither sbx sent nor the counter explains may be the
 * sandbox ending under the command: the backend is asked whether the sandbox is gone (`LOST_SANDBOX_CHECKS`), and the
 * call rejects with its lost-sandbox error if so, since a lost sandbox is not a result. It rejects too when that check
 * itself fails (a result that might be false is never reported); an unreadable OOM counter counts as unknown.
 */
export async function commandExitOutcome(facts: CommandExitFacts): Promise<CommandExit> {
  const { exitCode } = facts;
  if (exitCode !== SIGKILL_EXIT_CODE) return { exitCode, outOfMemoryKilled: false };
  const counterGrew = await facts.outOfMemoryCounterGrew().catch(() => null);
  const outcome: CommandExit = { exitCode, outOfMemoryKilled: commandOutOfMemoryReport(counterGrew) };
  if (counterGrew === true || facts.killRequested()) return outcome;
  for (let attempt = 1; ; attempt++) {
    const lost = await facts.lostError();
    if (lost) throw lost;
    if (attempt >= LOST_SANDBOX_CHECKS.attempts) return outcome;
    await cancellableDelay(LOST_SANDBOX_CHECKS.intervalMs).promise;
  }
}
