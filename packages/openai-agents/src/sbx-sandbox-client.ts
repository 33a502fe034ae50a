import { posix } from "node:path";
import { createSandbox, DEFAULT_OUTPUT_LIMIT_BYTES, isSbxError, type CreateSandboxOptions, type Sandbox, type TimeoutError } from "@sbx/core";
import {
  Manifest,
  normalizeSandboxClientCreateArgs,
  SandboxUnsupportedFeatureError,
  type ExecCommandArgs,
  type ListDirectoryArgs,
  type ReadFileArgs,
  type SandboxClient,
  type SandboxClientCreateArgs,
  type SandboxDirectoryEntry,
  type SandboxExecResult,
  type SandboxSession,
  type SandboxSessionState,
} from "@openai/agents-core/sandbox";
import { formatExecResponse, truncateOutput } from "@openai/agents-core/sandbox/internal";

/** Default `commandTimeoutMs`: five minutes. */
export const DEFAULT_COMMAND_TIMEOUT_MS = 300_000;

/** Options of `SbxSandboxClient`. */
export interface SbxSandboxClientOptions {
  /** `createSandbox` target: `"docker://python:3.12-slim"`, `"fake://"`, a provider, or `"auto"`. Default `"auto"`. */
  target?: Parameters<typeof createSandbox>[0];
  /** sbx create options (network policy, lifetime, limits, env, secrets). */
  createOptions?: CreateSandboxOptions;
  /**
   * Time limit of every command, in milliseconds; past it the command is killed and the result says so. Default
   * 300000. Why: commands run to completion here (no PTY sessions yet), and sbx has no default command timeout.
   */
  commandTimeoutMs?: number;
}

/** The session state: the SDK's manifest and the sbx sandbox id. */
export interface SbxSandboxSessionState extends SandboxSessionState {
  /** The sbx sandbox id. */
  sandboxId: string;
  /** The sbx backend name. */
  backend: string;
}

/**
 * An OpenAI Agents SDK sandbox session over an sbx sandbox: commands (`exec`, `execCommand`, run to completion with
 * stdout and stderr merged in order inside the sandbox), `readFile`, `listDir`, `pathExists`, `directoryExists`, and
 * lifecycle. No PTY (`supportsPty()` is false), no `writeStdin`, no editor, no manifest entries yet (see the README).
 */
export class SbxSandboxSession implements SandboxSession<SbxSandboxSessionState> {
  /** The SDK's session state. */
  readonly state: SbxSandboxSessionState;
  /** The sbx sandbox underneath. */
  readonly sandbox: Sandbox;
  readonly #commandTimeoutMs: number;

  constructor(sandbox: Sandbox, manifest: Manifest, commandTimeoutMs: number) {
    this.sandbox = sandbox;
    this.#commandTimeoutMs = commandTimeoutMs;
    this.state = { manifest, sandboxId: sandbox.id, backend: sandbox.backend, workspaceReady: true };
  }

  /** Whether the sandbox is usable as far as sbx knows. */
  running(): Promise<boolean> {
    return Promise.resolve(!this.sandbox.closed);
  }

  /** No PTY: commands run to completion. */
  supportsPty(): boolean {
    return false;
  }

  /**
   * Runs `cmd` with `sh -c` (stdout and stderr merged by the sandbox's shell, so `output` is in the order the
   * process wrote; `stdout` is that same merged stream and `stderr` is empty) in `workdir` (default: the manifest
   * root). `yieldTimeMs` is not honoured: the command runs to its end or to `commandTimeoutMs`.
   */
  async exec(args: ExecCommandArgs): Promise<SandboxExecResult> {
    if (args.tty) throw new SandboxUnsupportedFeatureError("sbx sessions have no PTY yet (tty: true).", { provider: "sbx" });
    if (args.runAs)
      throw new SandboxUnsupportedFeatureError("sbx sessions run commands as the sandbox's user; runAs is not supported.", { provider: "sbx" });
    const started = Date.now();
    const cwd = args.workdir ? posix.resolve(this.state.manifest.root, args.workdir) : this.state.manifest.root;
    let merged: string;
    let exitCode: number | null;
    try {
      // sbx merges the two streams inside the sandbox (`exec 2>&1` before the command), so the order is the process's.
      const result = await this.sandbox.commands.run(args.cmd, {
        cwd,
        timeoutMs: this.#commandTimeoutMs,
        outputLimitBytes: DEFAULT_OUTPUT_LIMIT_BYTES,
        combinedOutput: true,
      });
      merged = result.output ?? `${result.stdout}${result.stderr}`;
      exitCode = result.exitCode;
    } catch (error) {
      if (!isSbxError(error, "SBX_TIMEOUT")) throw error;
      const timeout = error as TimeoutError;
      merged = `${timeout.partialStdout}${timeout.partialStderr}\n[sbx: the command ran past ${timeout.timeoutMs} ms and ${timeout.killed ? "was killed" : "was told to stop"}]`;
      exitCode = null;
    }
    const output = truncateOutput(merged, args.maxOutputTokens);
    return {
      output: output.text,
      stdout: merged,
      stderr: "",
      wallTimeSeconds: (Date.now() - started) / 1000,
      exitCode,
      ...(output.originalTokenCount === undefined ? {} : { originalTokenCount: output.originalTokenCount }),
    };
  }

  /** `exec`, formatted for the model as the SDK's own sessions format it. */
  async execCommand(args: ExecCommandArgs): Promise<string> {
    return formatExecResponse(await this.exec(args));
  }

  /** Reads a file as bytes (sbx's file API: confined to the workspace, whole files up to `maxBytes` or 64 MiB). */
  async readFile(args: ReadFileArgs): Promise<Uint8Array> {
    return this.sandbox.files.read(this.#path(args.path), { format: "bytes", ...(args.maxBytes === undefined ? {} : { maxBytes: args.maxBytes }) });
  }

  /** Lists one folder. */
  async listDir(args: ListDirectoryArgs): Promise<SandboxDirectoryEntry[]> {
    const entries = await this.sandbox.files.list(this.#path(args.path));
    return entries.map((entry) => ({
      name: entry.name,
      path: entry.path,
      type: entry.type === "directory" ? "dir" : entry.type === "file" ? "file" : "other",
    }));
  }

  /** Whether the path exists. */
  async pathExists(path: string): Promise<boolean> {
    return this.sandbox.files.exists(this.#path(path));
  }

  /** Whether the path is a directory. */
  async directoryExists(path: string): Promise<boolean> {
    try {
      return (await this.sandbox.files.stat(this.#path(path))).type === "directory";
    } catch (error) {
      if (isSbxError(error, "SBX_FILE_NOT_FOUND")) return false;
      throw error;
    }
  }

  /** Kills the sandbox. */
  async shutdown(): Promise<void> {
    await this.sandbox.kill();
  }

  /** Kills the sandbox. */
  async delete(): Promise<void> {
    await this.sandbox.kill();
  }

  /** Kills the sandbox. */
  async close(): Promise<void> {
    await this.sandbox.kill();
  }

  #path(path: string): string {
    return posix.resolve(this.state.manifest.root, path);
  }
}

/**
 * An OpenAI Agents SDK `SandboxClient` (beta API, pinned to `@openai/agents-core` 0.20.0) that creates an sbx sandbox
 * per session. Pass it as `run(agent, input, { sandbox: { client } })` for a `SandboxAgent` with the `shell()`
 * capability.
 */
export class SbxSandboxClient implements SandboxClient<Record<string, unknown>, SbxSandboxSessionState> {
  /** The SDK's backend id. */
  readonly backendId = "sbx";
  readonly #options: SbxSandboxClientOptions;

  constructor(options: SbxSandboxClientOptions = {}) {
    this.#options = options;
  }

  /** Creates an sbx sandbox for a session. A manifest with entries is refused (not supported yet). */
  readonly create = (async (args?: SandboxClientCreateArgs | Manifest, manifestOptions?: Record<string, unknown>) => {
    const normalized = normalizeSandboxClientCreateArgs(args, manifestOptions);
    if (normalized.snapshot) throw new SandboxUnsupportedFeatureError("sbx sessions do not restore snapshots.", { provider: "sbx" });
    if (Object.keys(normalized.manifest.entries).length > 0)
      throw new SandboxUnsupportedFeatureError("sbx sessions do not materialize manifest entries yet; upload files with sandbox.files.", {
        provider: "sbx",
      });
    const sandbox = await createSandbox(this.#options.target ?? "auto", this.#options.createOptions);
    if (normalized.manifest.root !== sandbox.workspace) {
      await sandbox.kill();
      throw new SandboxUnsupportedFeatureError(
        `The manifest root must be the sbx workspace ${sandbox.workspace} (got ${normalized.manifest.root}).`,
        {
          provider: "sbx",
        },
      );
    }
    return new SbxSandboxSession(sandbox, normalized.manifest, this.#options.commandTimeoutMs ?? DEFAULT_COMMAND_TIMEOUT_MS);
  }) as NonNullable<SandboxClient<Record<string, unknown>, SbxSandboxSessionState>["create"]>;
}
