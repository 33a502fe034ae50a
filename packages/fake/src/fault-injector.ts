import { ProviderError, TimeoutError } from "@sbx/core";

/**
 * Deterministic faults for agent tests: each `…Next…` fault fires once, on the next matching call of the provider
 * that owns it, then clears itself.
 */
export class FaultInjector {
  private pendingCreateFailures: unknown[] = [];
  private pendingCommandTimeouts: number[] = [];
  private pendingCodeTimeouts: number[] = [];
  private readonly lost = new Set<string>();
  private readonly onLose: (sandboxId: string) => void;

  /** @internal */
  constructor(onLose: (sandboxId: string) => void) {
    this.onLose = onLose;
  }

  /** The next `createSandbox()` fails with `error` (default: a retryable `ProviderError`). */
  failNextCreate(error?: unknown): void {
    this.pendingCreateFailures.push(
      error ??
        new ProviderError({
          backend: "fake",
          retryable: true,
          message: "Injected fault: the fake backend failed to create a sandbox (provider.faults.failNextCreate).",
        }),
    );
  }

  /** The next command (run or start) fails with `TimeoutError`, as if it ran past `timeoutMs` (default 1000) and was killed; it never runs. */
  timeOutNextCommand(options: { timeoutMs?: number } = {}): void {
    this.pendingCommandTimeouts.push(options.timeoutMs ?? 1_000);
  }

  /** The next `runCode()` fails with `TimeoutError`, as if it ran past `timeoutMs` (default 1000); the code never runs. */
  timeOutNextCode(options: { timeoutMs?: number } = {}): void {
    this.pendingCodeTimeouts.push(options.timeoutMs ?? 1_000);
  }

  /** The sandbox disappears, as if it expired or its host died: every later call on it raises `SandboxNotFoundError`. */
  loseSandbox(sandboxId: string): void {
    this.lost.add(sandboxId);
    this.onLose(sandboxId);
  }

  /** Clears every pending fault (lost sandboxes stay lost). */
  reset(): void {
    this.pendingCreateFailures = [];
    this.pendingCommandTimeouts = [];
    this.pendingCodeTimeouts = [];
  }

  /** @internal Throws the pending create failure, if any. */
  takeCreateFailure(): void {
    if (this.pendingCreateFailures.length > 0) throw this.pendingCreateFailures.shift();
  }

  /** @internal Throws a pending command timeout, if any. */
  takeCommandTimeout(): void {
    const timeoutMs = this.pendingCommandTimeouts.shift();
    if (timeoutMs !== undefined) throw injectedTimeout(timeoutMs, "command");
  }

  /** @internal Throws a pending code timeout, if any. */
  takeCodeTimeout(): void {
    const timeoutMs = this.pendingCodeTimeouts.shift();
    if (timeoutMs !== undefined) throw injectedTimeout(timeoutMs, "code");
  }

  /** @internal Whether a sandbox was lost. */
  isLost(sandboxId: string): boolean {
    return this.lost.has(sandboxId);
  }
}

function injectedTimeout(timeoutMs: number, what: string): TimeoutError {
  return new TimeoutError({
    backend: "fake",
    timeoutMs,
    killed: true,
    message: `Injected fault: the ${what} ran past its ${timeoutMs} ms timeout and was killed (provider.faults.timeOut${what === "command" ? "NextCommand" : "NextCode"}).`,
  });
}
