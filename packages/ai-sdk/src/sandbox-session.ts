import type {
  Experimental_SandboxDirectoryEntry as SandboxDirectoryEntry,
  Experimental_SandboxFileStat as SandboxFileStat,
  Experimental_SandboxProcess as SandboxProcess,
  Experimental_SandboxSession as SandboxSession,
} from "ai";
import { CapabilityNotSupportedError, isSbxError, PathError, type CommandHandle, type Sandbox } from "@sbx/core";
import { nodeEncoding } from "./text-encoding.js";

type SpawnOptions = Parameters<SandboxSession["spawn"]>[0];

/** An AI SDK sandbox session over an sbx sandbox, plus what only its owner may do (kill it). */
export interface SbxSandboxSession extends SandboxSession, AsyncDisposable {
  /** The sbx sandbox underneath. */
  readonly sandbox: Sandbox;
  /** The same session without `sandbox`, `kill()` or disposal: what to hand to tools and `experimental_sandbox`. */
  restricted(): SandboxSession;
  /** Destroys the sandbox. */
  kill(): Promise<void>;
}

/** Options for `createSandboxSession()`. */
export interface SandboxSessionOptions {
  /** Extra text appended to `description` (for example what the agent is for). */
  instructions?: string;
}

/** `null` for "not found", so session methods resolve to null as the interface says; every other error is rethrown. */
async function orNull<Value>(work: () => Promise<Value>): Promise<Value | null> {
  try {
    return await work();
  } catch (error) {
    if (isSbxError(error, "SBX_FILE_NOT_FOUND")) return null;
    throw error;
  }
}

function textStream(source: AsyncIterable<string>): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  const iterator = source[Symbol.asyncIterator]();
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      const next = await iterator.next();
      if (next.done) controller.close();
      else controller.enqueue(encoder.encode(next.value));
    },
    async cancel() {
      await iterator.return?.();
    },
  });
}

/** A push-based text stream, for processes run with `commands.run()` streaming callbacks. */
function pushStream(): { stream: ReadableStream<Uint8Array>; push: (text: string) => void; close: () => void } {
  const encoder = new TextEncoder();
  let controller!: ReadableStreamDefaultController<Uint8Array>;
  let open = true;
  const stream = new ReadableStream<Uint8Array>({ start: (value) => void (controller = value), cancel: () => void (open = false) });
  return {
    stream,
    push: (text) => {
      if (open) controller.enqueue(encoder.encode(text));
    },
    close: () => {
      if (!open) return;
      open = false;
      controller.close();
    },
  };
}

function describe(sandbox: Sandbox, instructions: string | undefined): string {
  const network = sandbox.audit().policies.network;
  const applied = (network?.applied ?? {}) as { egress?: string; allow?: string[] };
  const egress =
    applied.egress === "allow"
      ? "outbound network allowed"
      : applied.allow?.length
        ? `outbound network denied except ${applied.allow.join(", ")}`
        : "no outbound network";
  const lines = [
    `Commands run in an isolated ${sandbox.backend} sandbox (sbx, id ${sandbox.id}) with sh -c.`,
    `Working directory and file root: ${sandbox.workspace} (relative paths resolve there; paths outside it are refused).`,
    `Languages for code: ${sandbox.capabilities.languages.join(", ") || "none"}. ${egress}.`,
  ];
  if (sandbox.audit().isolating === false) lines.push("Note: this backend is an in-process fake for tests, not a security boundary.");
  if (instructions) lines.push(instructions);
  return lines.join("\n");
}

function sliceLines(text: string, startLine: number | undefined, endLine: number | undefined): string {
  if (startLine === undefined && endLine === undefined) return text;
  const lines = text.split(/(?<=\n)/);
  const start = Math.max(1, startLine ?? 1);
  const end = endLine === undefined ? lines.length : Math.max(start - 1, endLine);
  return lines.slice(start - 1, end).join("");
}

function processFromHandle(
  handle: CommandHandle,
  abortSignal: AbortSignal | undefined,
  withStdin: boolean,
): SandboxProcess & { stdin?: WritableStream<Uint8Array> } {
  const exit = handle.wait().then((result) => ({ exitCode: result.exitCode }));
  exit.catch(() => undefined);
  const onAbort = () => void handle.kill().catch(() => undefined);
  abortSignal?.addEventListener("abort", onAbort, { once: true });
  void exit.finally(() => abortSignal?.removeEventListener("abort", onAbort)).catch(() => undefined);
  const pid = Number(handle.pid);
  const process: SandboxProcess & { stdin?: WritableStream<Uint8Array> } = {
    pid: Number.isInteger(pid) ? pid : undefined,
    stdout: textStream(handle.stdout),
    stderr: textStream(handle.stderr),
    wait: () => (abortSignal?.aborted ? Promise.reject(abortSignal.reason) : exit),
    kill: () => handle.kill(),
  };
  if (withStdin) {
    Object.defineProperty(process, "stdin", {
      enumerable: true,
      value: new WritableStream<Uint8Array>({
        write: (chunk) => handle.writeStdin(chunk),
        close: () => handle.closeStdin(),
        abort: () => handle.closeStdin(),
      }),
    });
  }
  return process;
}

/**
 * Implements AI SDK 7's `Experimental_SandboxSession` over any sbx `Sandbox`, so `generateText`, `streamText` and
 * `ToolLoopAgent` with `experimental_sandbox` run commands and file operations on Docker, E2B, the fake or any
 * adapter. Relative paths (and `workingDirectory`) resolve against the sandbox workspace. Hand
 * `session.restricted()` to models and tools: it cannot kill the sandbox.
 */
export function createSandboxSession(sandbox: Sandbox, options: SandboxSessionOptions = {}): SbxSandboxSession {
  const spawn = (async (spawnOptions: SpawnOptions) => {
    const withStdin = spawnOptions.stdin === true;
    if (withStdin && !sandbox.capabilities.STDIN) {
      throw new CapabilityNotSupportedError({ capability: "STDIN", backend: sandbox.backend, supportedBy: [], detail: "spawn with stdin: true" });
    }
    if (sandbox.capabilities.BACKGROUND_COMMANDS) {
      const handle = await sandbox.commands.start(spawnOptions.command, {
        cwd: spawnOptions.workingDirectory,
        env: spawnOptions.env,
        stdin: withStdin ? true : undefined,
        signal: spawnOptions.abortSignal,
      });
      return processFromHandle(handle, spawnOptions.abortSignal, withStdin);
    }
    if (withStdin)
      throw new CapabilityNotSupportedError({
        capability: "BACKGROUND_COMMANDS",
        backend: sandbox.backend,
        supportedBy: [],
        detail: "spawn with stdin: true needs a background command handle",
      });
    // Without background commands: a foreground run whose output streams as it arrives; kill aborts the run.
    const stdout = pushStream();
    const stderr = pushStream();
    const controller = new AbortController();
    const forward = () => controller.abort(spawnOptions.abortSignal?.reason);
    spawnOptions.abortSignal?.addEventListener("abort", forward, { once: true });
    const exit = sandbox.commands
      .run(spawnOptions.command, {
        cwd: spawnOptions.workingDirectory,
        env: spawnOptions.env,
        signal: controller.signal,
        onStdout: stdout.push,
        onStderr: stderr.push,
      })
      .then((result) => ({ exitCode: result.exitCode }))
      .finally(() => {
        stdout.close();
        stderr.close();
        spawnOptions.abortSignal?.removeEventListener("abort", forward);
      });
    exit.catch(() => undefined);
    return {
      stdout: stdout.stream,
      stderr: stderr.stream,
      wait: () => exit,
      kill: async () => {
        controller.abort();
        await exit.catch(() => undefined);
      },
    } satisfies SandboxProcess;
  }) as SandboxSession["spawn"];

  const session: SandboxSession = {
    description: describe(sandbox, options.instructions),
    readFile: ({ path, abortSignal }) => orNull(() => sandbox.files.read(path, { format: "stream", signal: abortSignal })),
    readBinaryFile: ({ path, abortSignal }) => orNull(() => sandbox.files.read(path, { format: "bytes", signal: abortSignal })),
    readTextFile: ({ path, abortSignal, encoding, startLine, endLine }) =>
      orNull(async () => {
        const bytes = await sandbox.files.read(path, { format: "bytes", signal: abortSignal });
        return sliceLines(Buffer.from(bytes).toString(nodeEncoding(encoding)), startLine, endLine);
      }),
    writeFile: async ({ path, content, abortSignal }) => sandbox.files.write(path, content, { signal: abortSignal }),
    writeBinaryFile: async ({ path, content, abortSignal }) => sandbox.files.write(path, content, { signal: abortSignal }),
    writeTextFile: async ({ path, content, abortSignal, encoding }) =>
      sandbox.files.write(path, new Uint8Array(Buffer.from(content, nodeEncoding(encoding))), { signal: abortSignal }),
    stat: ({ path, abortSignal }) =>
      orNull(async (): Promise<SandboxFileStat> => {
        // The AI SDK's type says symbolic links are followed: a link inside the workspace describes its target (ADR 0046).
        const entry = await sandbox.files.stat(path, { signal: abortSignal, followSymlinks: true });
        return { type: entry.type === "file" || entry.type === "directory" ? entry.type : "other", size: entry.size };
      }),
    listDirectory: ({ path, abortSignal }) =>
      orNull(async (): Promise<SandboxDirectoryEntry[]> => {
        const entries = await sandbox.files.list(path, { signal: abortSignal });
        return entries.map((entry) => ({ name: entry.name, type: entry.type }));
      }),
    deleteFile: async ({ path, abortSignal }) => {
      const entry = await orNull(() => sandbox.files.stat(path, { signal: abortSignal }));
      if (entry === null) return false;
      if (entry.type === "directory")
        throw new PathError({
          path,
          reason: "is-a-directory",
          backend: sandbox.backend,
          message: `Refused to delete ${JSON.stringify(path)}: it is a directory (deleteFile removes files only).`,
        });
      await sandbox.files.remove(path, { signal: abortSignal });
      return true;
    },
    spawn,
    run: async ({ command, workingDirectory, env, abortSignal }) => {
      const result = await sandbox.commands.run(command, { cwd: workingDirectory, env, signal: abortSignal });
      return { exitCode: result.exitCode, stdout: result.stdout, stderr: result.stderr };
    },
  };
  const restricted = Object.freeze({ ...session });
  return Object.freeze({
    ...session,
    sandbox,
    restricted: () => restricted,
    kill: () => sandbox.kill(),
    [Symbol.asyncDispose]: () => sandbox.kill(),
  });
}
