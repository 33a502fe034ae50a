import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import type { Sandbox } from "@sbx/core";
import { z } from "zod";
import { DEFAULT_TOOL_OUTPUT_LIMIT_BYTES, PACKAGE_VERSION, type SandboxMcpServerOptions } from "./options.js";
import { SandboxHolder } from "./sandbox-holder.js";
import { toolError } from "./tool-errors.js";
import { truncateForModel } from "./truncate.js";

/** The URI of the audit-record resource of the session's sandbox. */
export const AUDIT_RESOURCE_URI = "sbx://sandbox/audit";

/** Tool names, stable. */
export const TOOL_NAMES = [
  "sandbox_create",
  "run_command",
  "run_code",
  "create_code_context",
  "read_file",
  "write_file",
  "list_files",
  "sandbox_kill",
] as const;

/** An MCP server for one session, with the sandbox it owns. Close it with `close()` (also kills the sandbox). */
export interface SandboxMcpSession {
  /** The MCP server; connect it to a transport. */
  readonly server: McpServer;
  /** The session's sandbox holder (for tests and embedding). */
  readonly sandboxes: SandboxHolder;
  /** Closes the server and kills the sandbox. */
  close(): Promise<void>;
}

function describeSandbox(sandbox: Sandbox) {
  const { languages, ...flags } = sandbox.capabilities;
  return {
    id: sandbox.id,
    backend: sandbox.backend,
    workspace: sandbox.workspace,
    languages: [...languages],
    capabilities: Object.entries(flags)
      .filter(([, on]) => on)
      .map(([name]) => name),
    network: sandbox.audit().policies.network?.applied ?? null,
  };
}

function json(value: unknown): string {
  return JSON.stringify(value, null, 2);
}

/** Wraps a tool body so every failure becomes an `isError` result with code and remedy, never a transport error. */
function guarded<Input>(body: (input: Input, extra: { signal: AbortSignal }) => Promise<CallToolResult>) {
  return async (input: Input, extra: { signal: AbortSignal }): Promise<CallToolResult> => {
    try {
      return await body(input, extra);
    } catch (error) {
      return toolError(error);
    }
  };
}

/**
 * Creates an MCP server exposing one sandbox per session as tools: `sandbox_create`, `run_command`, `run_code`,
 * `create_code_context`, `read_file`, `write_file`, `list_files`, `sandbox_kill`; plus the sandbox's audit record as
 * the resource `sbx://sandbox/audit`. The backend and network policy are fixed by `options`; sbx errors come back
 * as tool errors (`isError: true`) with their code and remedy.
 */
export function createSandboxMcpServer(options: SandboxMcpServerOptions = {}): SandboxMcpSession {
  const limit = options.outputLimitBytes ?? DEFAULT_TOOL_OUTPUT_LIMIT_BYTES;
  const sandboxes = new SandboxHolder(options);
  const server = new McpServer(
    { name: options.name ?? "sbx", version: options.version ?? PACKAGE_VERSION },
    {
      instructions:
        "Tools run in an isolated sbx sandbox owned by this session (created on first use). Network egress follows the server's policy (denied unless the operator allowed it). Paths are relative to the sandbox workspace.",
    },
  );

  server.registerTool(
    "sandbox_create",
    {
      description:
        "Create the session's sandbox, or return the existing one (reused by every tool). fresh: true kills the current one and starts a new one.",
      inputSchema: { fresh: z.boolean().optional().describe("Replace the existing sandbox with a new one. Default false.") },
      annotations: { title: "Create or reuse the sandbox", idempotentHint: true },
    },
    guarded(async (input, extra) => {
      if (input.fresh === true) await sandboxes.kill();
      const sandbox = await sandboxes.get(extra.signal);
      const description = describeSandbox(sandbox);
      return { content: [{ type: "text", text: json(description) }], structuredContent: description };
    }),
  );

  server.registerTool(
    "run_command",
    {
      description:
        "Run a shell command (sh -c) in the sandbox and return its exit code, stdout and stderr. A non-zero exit code is a result, not an error. Output beyond the limit is cut and the cut is stated.",
      inputSchema: {
        command: z.string().min(1).describe("Shell command line."),
        cwd: z.string().min(1).optional().describe("Working directory; default the workspace."),
        env: z.record(z.string(), z.string()).optional().describe("Extra environment variables."),
        stdin: z.string().optional().describe("Text written to standard input, which is then closed."),
        timeoutMs: z.number().int().positive().optional().describe("Kill the command after this many milliseconds."),
      },
      annotations: { title: "Run a command", destructiveHint: true, openWorldHint: false },
    },
    guarded(async (input, extra) => {
      const sandbox = await sandboxes.get(extra.signal);
      const result = await sandbox.commands.run(input.command, {
        cwd: input.cwd,
        env: input.env,
        stdin: input.stdin,
        timeoutMs: input.timeoutMs,
        signal: extra.signal,
      });
      const stdout = truncateForModel(result.stdout, limit, result.totalBytes.stdout);
      const stderr = truncateForModel(result.stderr, limit, result.totalBytes.stderr);
      const structured = {
        exitCode: result.exitCode,
        stdout: stdout.text,
        stderr: stderr.text,
        truncated: { stdout: stdout.truncated, stderr: stderr.truncated },
        durationMs: result.durationMs,
      };
      return {
        content: [{ type: "text", text: `exit code ${result.exitCode}\n--- stdout ---\n${stdout.text}\n--- stderr ---\n${stderr.text}` }],
        structuredContent: structured,
      };
    }),
  );

  server.registerTool(
    "run_code",
    {
      description:
        "Run code (Python by default) in the sandbox. Returns stdout, stderr, the raised exception (as a result, not an error) and rich results where the backend has them (images come back as image content). Pass contextId from create_code_context to keep variables between calls, where the backend supports it.",
      inputSchema: {
        code: z.string().min(1).describe("Source code."),
        language: z.string().min(1).optional().describe("Language; default python."),
        contextId: z.string().min(1).optional().describe("A code context id from create_code_context."),
        timeoutMs: z.number().int().positive().optional().describe("Kill the run after this many milliseconds."),
      },
      annotations: { title: "Run code", destructiveHint: true, openWorldHint: false },
    },
    guarded(async (input, extra) => {
      const sandbox = await sandboxes.get(extra.signal);
      const execution = await sandbox.runCode(input.code, {
        language: input.language,
        contextId: input.contextId,
        timeoutMs: input.timeoutMs,
        signal: extra.signal,
      });
      const stdout = truncateForModel(execution.stdout, limit);
      const stderr = truncateForModel(execution.stderr, limit);
      const content: CallToolResult["content"] = [];
      const lines = [`--- stdout ---\n${stdout.text}`, `--- stderr ---\n${stderr.text}`];
      if (execution.error)
        lines.push(`--- error ---\n${execution.error.name}: ${execution.error.value}\n${truncateForModel(execution.error.traceback, limit).text}`);
      const results = (execution.results ?? []).map((result) => ({
        isMainResult: result.isMainResult,
        text: result.data["text/plain"] ?? null,
        mimeTypes: Object.keys(result.data),
      }));
      for (const result of results)
        if (result.text !== null) lines.push(`--- ${result.isMainResult ? "result" : "display"} ---\n${truncateForModel(result.text, limit).text}`);
      content.push({ type: "text", text: lines.join("\n") });
      for (const result of execution.results ?? []) {
        for (const mimeType of ["image/png", "image/jpeg", "image/gif"]) {
          const data = result.data[mimeType];
          if (data) content.push({ type: "image", data, mimeType });
        }
      }
      return {
        content,
        structuredContent: {
          stdout: stdout.text,
          stderr: stderr.text,
          error: execution.error,
          results: execution.results === null ? null : results,
          truncated: { stdout: stdout.truncated, stderr: stderr.truncated },
        },
      };
    }),
  );

  server.registerTool(
    "create_code_context",
    {
      description:
        "Create a persistent interpreter in the sandbox: run_code calls with its contextId share variables and imports. Only where the backend supports stateful code; otherwise a tool error says which backends do.",
      inputSchema: { language: z.string().min(1).optional().describe("Language; default python.") },
      annotations: { title: "Create a code context" },
    },
    guarded(async (input, extra) => {
      const sandbox = await sandboxes.get(extra.signal);
      const context = await sandbox.createCodeContext({ language: input.language, signal: extra.signal });
      return {
        content: [{ type: "text", text: `contextId: ${context.id}` }],
        structuredContent: { contextId: context.id, language: context.language },
      };
    }),
  );

  server.registerTool(
    "read_file",
    {
      description:
        "Read a file from the sandbox workspace. Text by default; encoding base64 for binary files. Content beyond the limit is cut and the cut is stated.",
      inputSchema: {
        path: z.string().min(1).describe("Path relative to the workspace, or absolute inside it."),
        encoding: z.enum(["utf8", "base64"]).optional().describe("utf8 (default) or base64."),
      },
      annotations: { title: "Read a file", readOnlyHint: true },
    },
    guarded(async (input, extra) => {
      const sandbox = await sandboxes.get(extra.signal);
      const bytes = await sandbox.files.read(input.path, { format: "bytes", signal: extra.signal });
      const kept = bytes.subarray(0, limit);
      const note = bytes.length > limit ? `\n[file truncated: showing the first ${limit} of ${bytes.length} bytes]` : "";
      const text = input.encoding === "base64" ? Buffer.from(kept).toString("base64") : Buffer.from(kept).toString("utf8");
      return {
        content: [{ type: "text", text: text + note }],
        structuredContent: { path: input.path, size: bytes.length, encoding: input.encoding ?? "utf8", content: text, truncated: note !== "" },
      };
    }),
  );

  server.registerTool(
    "write_file",
    {
      description: "Write a file in the sandbox workspace, creating parent folders and replacing an existing file.",
      inputSchema: {
        path: z.string().min(1).describe("Path relative to the workspace, or absolute inside it."),
        content: z.string().describe("File content."),
        encoding: z.enum(["utf8", "base64"]).optional().describe("How content is encoded: utf8 (default) or base64."),
      },
      annotations: { title: "Write a file", destructiveHint: true },
    },
    guarded(async (input, extra) => {
      const sandbox = await sandboxes.get(extra.signal);
      const data = input.encoding === "base64" ? new Uint8Array(Buffer.from(input.content, "base64")) : input.content;
      await sandbox.files.write(input.path, data, { signal: extra.signal });
      const size = typeof data === "string" ? Buffer.byteLength(data) : data.length;
      return { content: [{ type: "text", text: `wrote ${size} bytes to ${input.path}` }], structuredContent: { path: input.path, size } };
    }),
  );

  server.registerTool(
    "list_files",
    {
      description: "List a folder in the sandbox (one level): name, type and size of each entry.",
      inputSchema: { path: z.string().min(1).optional().describe("Folder; default the workspace.") },
      annotations: { title: "List a folder", readOnlyHint: true },
    },
    guarded(async (input, extra) => {
      const sandbox = await sandboxes.get(extra.signal);
      const entries = (await sandbox.files.list(input.path ?? ".", { signal: extra.signal })).map((entry) => ({
        name: entry.name,
        path: entry.path,
        type: entry.type,
        size: entry.size,
      }));
      entries.sort((left, right) => left.name.localeCompare(right.name));
      const text =
        entries.length === 0
          ? "(empty)"
          : entries
              .map(
                (entry) =>
                  `${entry.type === "directory" ? "d" : entry.type === "symlink" ? "l" : "-"} ${String(entry.size).padStart(10)} ${entry.name}`,
              )
              .join("\n");
      return { content: [{ type: "text", text }], structuredContent: { entries } };
    }),
  );

  server.registerTool(
    "sandbox_kill",
    {
      description: "Destroy the session's sandbox and everything in it. The next tool call creates a new one.",
      inputSchema: {},
      annotations: { title: "Kill the sandbox", destructiveHint: true },
    },
    guarded(async () => {
      const id = await sandboxes.kill();
      return { content: [{ type: "text", text: id ? `killed sandbox ${id}` : "no sandbox to kill" }], structuredContent: { killed: id ?? null } };
    }),
  );

  server.registerResource(
    "sandbox-audit",
    AUDIT_RESOURCE_URI,
    {
      title: "Audit record of the session's sandbox",
      description: "What was requested, what was applied and how it is enforced (network, limits, mounts, user, lifetime).",
      mimeType: "application/json",
    },
    async (uri) => {
      const sandbox = sandboxes.peek();
      const body = sandbox ? sandbox.audit() : { sandbox: null, note: "No sandbox yet in this session; any tool call creates one." };
      return { contents: [{ uri: uri.href, mimeType: "application/json", text: json(body) }] };
    },
  );

  return {
    server,
    sandboxes,
    async close() {
      await sandboxes.close();
      await server.close().catch(() => undefined);
    },
  };
}
