import { createSandbox, type Sandbox } from "@sbx/core";
import type { SandboxMcpServerOptions } from "./options.js";

/**
 * The one sandbox of an MCP session: created on first use with the server's target and policy, reused by every
 * later call, replaced only by `sandbox_create { fresh: true }` or after `sandbox_kill`, and killed when the
 * session closes.
 */
export class SandboxHolder {
  private current: Sandbox | undefined;
  private creating: Promise<Sandbox> | undefined;
  private closed = false;

  constructor(private readonly options: SandboxMcpServerOptions) {}

  /** The session's sandbox, created now if there is none (or the last one was killed). */
  async get(signal?: AbortSignal): Promise<Sandbox> {
    if (this.closed) throw new Error("The MCP session is closed.");
    if (this.current && !this.current.closed) return this.current;
    this.creating ??= createSandbox(this.options.target ?? "auto", {
      ...this.options.sandboxOptions,
      network: this.options.sandboxOptions?.network ?? { egress: "deny" },
      metadata: { "created-by": "sbx-mcp", ...this.options.sandboxOptions?.metadata },
      signal,
    }).finally(() => {
      this.creating = undefined;
    });
    const sandbox = await this.creating;
    if (this.closed) {
      await sandbox.kill();
      throw new Error("The MCP session closed while its sandbox was being created.");
    }
    this.current = sandbox;
    return sandbox;
  }

  /** The live sandbox, if one exists; never creates. */
  peek(): Sandbox | undefined {
    return this.current && !this.current.closed ? this.current : undefined;
  }

  /** Kills the current sandbox (if any). Returns its id. */
  async kill(): Promise<string | undefined> {
    const sandbox = this.current;
    this.current = undefined;
    if (!sandbox) return undefined;
    await sandbox.kill();
    return sandbox.id;
  }

  /** Ends the session: kills the sandbox and refuses new ones. */
  async close(): Promise<void> {
    this.closed = true;
    const pending = this.creating;
    await this.kill().catch(() => undefined);
    if (pending)
      await pending
        .then(
          (sandbox) => sandbox.kill(),
          () => undefined,
        )
        .catch(() => undefined);
  }
}
