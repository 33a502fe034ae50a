import { tool, type Tool } from "ai";
import type { Sandbox } from "@sbx/core";
import { z } from "zod";
import type { SbxSandboxSession } from "./sandbox-session.js";
import { returningSbxErrors, type ToolErrorOutput } from "./tool-errors.js";
import { truncateForModel } from "./truncate.js";

/** Options for `createSandboxTools()`. */
export interface SandboxToolsOptions {
  /** Bytes of each output stream (and of a file read) shown to the model; the rest is cut with a note. Default 16 KiB. */
  maxOutputBytes?: number;
  /** Also include `killSandbox`. Default false: the restricted tool set cannot end the sandbox. */
  allowKill?: boolean;
}

/** Default bytes of output the tools show the model per stream. */
export const DEFAULT_TOOL_OUTPUT_BYTES = 16 * 1024;

/** What `runCommand` returns. */
export interface RunCommandToolOutput {
  exitCode: number;
  stdout: string;
  stderr: string;
  truncated: boolean;
}
/** What `runCode` returns. */
export interface RunCodeToolOutput {
  stdout: string;
  stderr: string;
  error: { name: string; value: string; traceback: string } | null;
  results: Array<{ isMainResult: boolean; text: string | null; mimeTypes: string[] }> | null;
  truncated: boolean;
}
/** What `readFile` returns. */
export interface ReadFileToolOutput {
  path: string;
  size: number;
  content: string;
  truncated: boolean;
}
/** What `writeFile` returns. */
export interface WriteFileToolOutput {
  path: string;
  size: number;
}
/** What `listFolder` returns. */
export interface ListFolderToolOutput {
  entries: Array<{ name: string; type: "file" | "directory" | "symlink" | "other"; size: number }>;
}

/** The restricted tool set (no way to end the sandbox). */
export type SandboxTools = {
  runCommand: Tool<{ command: string; workingDirectory?: string; timeoutMs?: number }, RunCommandToolOutput | ToolErrorOutput>;
  runCode: Tool<{ code: string; language?: string; timeoutMs?: number }, RunCodeToolOutput | ToolErrorOutput>;
  readFile: Tool<{ path: string }, ReadFileToolOutput | ToolErrorOutput>;
  writeFile: Tool<{ path: string; content: string }, WriteFileToolOutput | ToolErrorOutput>;
  listFolder: Tool<{ path?: string }, ListFolderToolOutput | ToolErrorOutput>;
};

/** The tool set with `killSandbox` (`allowKill: true`). */
export type SandboxToolsWithKill = SandboxTools & {
  killSandbox: Tool<Record<string, never>, { killed: string } | ToolErrorOutput>;
};

/**
 * Ready-made AI SDK tools over one sbx sandbox: `runCommand`, `runCode`, `readFile`, `writeFile`, `listFolder`
 * (and `killSandbox` only with `allowKill`). Inputs are zod schemas; outputs are cut to `maxOutputBytes` with the
 * cut stated; sbx errors come back to the model as `{ error: { code, message, retryable } }`.
 */
export function createSandboxTools(target: Sandbox | SbxSandboxSession, options: SandboxToolsOptions & { allowKill: true }): SandboxToolsWithKill;
export function createSandboxTools(target: Sandbox | SbxSandboxSession, options?: SandboxToolsOptions): SandboxTools;
export function createSandboxTools(target: Sandbox | SbxSandboxSession, options: SandboxToolsOptions = {}): SandboxTools | SandboxToolsWithKill {
  const sandbox: Sandbox = "sandbox" in target ? target.sandbox : target;
  const limit = options.maxOutputBytes ?? DEFAULT_TOOL_OUTPUT_BYTES;

  const tools: SandboxTools = {
    runCommand: tool({
      description: `Run a shell command (sh -c) in the ${sandbox.backend} sandbox. Returns the exit code, stdout and stderr; a non-zero exit code is a normal result. Output over ${limit} bytes is cut and says so.`,
      inputSchema: z.object({
        command: z.string().min(1).describe("The shell command line."),
        workingDirectory: z.string().min(1).optional().describe(`Working directory; default ${sandbox.workspace}.`),
        timeoutMs: z.number().int().positive().max(3_600_000).optional().describe("Kill the command after this many milliseconds."),
      }),
      execute: ({ command, workingDirectory, timeoutMs }, { abortSignal }) =>
        returningSbxErrors(async () => {
          const result = await sandbox.commands.run(command, { cwd: workingDirectory, timeoutMs, signal: abortSignal });
          const stdout = truncateForModel(result.stdout, limit, result.totalBytes.stdout);
          const stderr = truncateForModel(result.stderr, limit, result.totalBytes.stderr);
          return { exitCode: result.exitCode, stdout: stdout.text, stderr: stderr.text, truncated: stdout.truncated || stderr.truncated };
        }),
    }),
    runCode: tool({
      description: `Run ${sandbox.capabilities.languages.join("/") || "Python"} code in the sandbox. Returns stdout, stderr, the raised exception (as a result) and the text of rich results where the backend has them.`,
      inputSchema: z.object({
        code: z.string().min(1).describe("Source code."),
        language: z
          .string()
          .min(1)
          .optional()
          .describe(`Language; one of ${sandbox.capabilities.languages.join(", ") || "python"}. Default python.`),
        timeoutMs: z.number().int().positive().max(3_600_000).optional().describe("Kill the run after this many milliseconds."),
      }),
      execute: ({ code, language, timeoutMs }, { abortSignal }) =>
        returningSbxErrors(async () => {
          const execution = await sandbox.runCode(code, { language, timeoutMs, signal: abortSignal });
          const stdout = truncateForModel(execution.stdout, limit);
          const stderr = truncateForModel(execution.stderr, limit);
          return {
            stdout: stdout.text,
            stderr: stderr.text,
            error: execution.error
              ? { name: execution.error.name, value: execution.error.value, traceback: truncateForModel(execution.error.traceback, limit).text }
              : null,
            results:
              execution.results === null
                ? null
                : execution.results.map((result) => ({
                    isMainResult: result.isMainResult,
                    text: result.data["text/plain"] === undefined ? null : truncateForModel(result.data["text/plain"], limit).text,
                    mimeTypes: Object.keys(result.data),
                  })),
            truncated: stdout.truncated || stderr.truncated,
          };
        }),
    }),
    readFile: tool({
      description: `Read a text file from the sandbox (paths relative to ${sandbox.workspace}). Content over ${limit} bytes is cut and says so.`,
      inputSchema: z.object({ path: z.string().min(1).describe("File path.") }),
      execute: ({ path }, { abortSignal }) =>
        returningSbxErrors(async () => {
          const bytes = await sandbox.files.read(path, { format: "bytes", signal: abortSignal });
          const content = truncateForModel(Buffer.from(bytes.subarray(0, limit + 4)).toString("utf8"), limit, bytes.length);
          return { path, size: bytes.length, content: content.text, truncated: content.truncated };
        }),
    }),
    writeFile: tool({
      description: "Write a text file in the sandbox, creating parent folders and replacing an existing file.",
      inputSchema: z.object({ path: z.string().min(1).describe("File path."), content: z.string().describe("The whole file content.") }),
      execute: ({ path, content }, { abortSignal }) =>
        returningSbxErrors(async () => {
          await sandbox.files.write(path, content, { signal: abortSignal });
          return { path, size: Buffer.byteLength(content) };
        }),
    }),
    listFolder: tool({
      description: "List a folder in the sandbox (one level): name, type and size of each entry.",
      inputSchema: z.object({ path: z.string().min(1).optional().describe(`Folder; default ${sandbox.workspace}.`) }),
      execute: ({ path }, { abortSignal }) =>
        returningSbxErrors(async () => {
          const entries = await sandbox.files.list(path ?? ".", { signal: abortSignal });
          return {
            entries: entries
              .map((entry) => ({ name: entry.name, type: entry.type, size: entry.size }))
              .sort((left, right) => left.name.localeCompare(right.name)),
          };
        }),
    }),
  };
  if (!options.allowKill) return tools;
  return {
    ...tools,
    killSandbox: tool({
      description: "Destroy the sandbox and everything in it. Later tool calls fail.",
      inputSchema: z.object({}),
      execute: () =>
        returningSbxErrors(async () => {
          await sandbox.kill();
          return { killed: sandbox.id };
        }),
    }),
  };
}
