import { readFile, writeFile } from "node:fs/promises";
import { join, relative, resolve } from "node:path";
import type { Execution, ExecutionResult } from "@sbx/core";
import { UsageError } from "../errors.js";
import { createCliSandbox, sandboxRequestFromFlags, streamToTerminal, type SandboxFlags } from "../sandbox-session.js";
import { SandboxOutput } from "../sandbox-output.js";
import type { CliEnvironment, OutputMode } from "../terminal.js";
import { status } from "../terminal.js";

/** Flags of `sbx code`. */
export interface CodeFlags extends SandboxFlags {
  language?: string;
  "out-dir"?: string;
}

/** Binary MIME types saved to files, with their extension. */
const SAVED_TYPES: Record<string, string> = {
  "image/png": "png",
  "image/jpeg": "jpg",
  "image/gif": "gif",
  "image/svg+xml": "svg",
  "application/pdf": "pdf",
};

/** One rich result as `sbx code` reports it: its MIME types, its text, and the files it was saved to. */
export interface RenderedResult {
  readonly isMainResult: boolean;
  readonly mimeTypes: string[];
  readonly text: string | null;
  readonly savedFiles: string[];
}

/** Saves each result's images (and PDFs) under `outDirectory` as `result-<n>.<ext>`; returns what was saved where. */
export async function saveRichResults(results: readonly ExecutionResult[], outDirectory: string, cwd: string): Promise<RenderedResult[]> {
  const rendered: RenderedResult[] = [];
  let index = 0;
  for (const result of results) {
    index += 1;
    const savedFiles: string[] = [];
    for (const [mimeType, data] of Object.entries(result.data)) {
      const extension = SAVED_TYPES[mimeType];
      if (!extension) continue;
      const path = join(outDirectory, `result-${index}.${extension}`);
      await writeFile(path, mimeType === "image/svg+xml" ? data : Buffer.from(data, "base64"));
      savedFiles.push(relative(cwd, path) || path);
    }
    rendered.push({ isMainResult: result.isMainResult, mimeTypes: Object.keys(result.data), text: result.data["text/plain"] ?? null, savedFiles });
  }
  return rendered;
}

async function readSource(environment: CliEnvironment, file: string): Promise<string> {
  if (file !== "-") return readFile(resolve(environment.cwd, file), "utf8");
  const chunks: Buffer[] = [];
  for await (const chunk of environment.stdin) chunks.push(typeof chunk === "string" ? Buffer.from(chunk) : Buffer.from(chunk));
  return Buffer.concat(chunks).toString("utf8");
}

/**
 * Prints an execution's outcome (after streaming): rich results and saved files, the exception. The result text,
 * exception and traceback come from the sandbox, so they go through `output` (escaped on a terminal). Returns the exit status.
 */
export function printExecution(
  environment: CliEnvironment,
  mode: OutputMode,
  execution: Execution,
  rendered: RenderedResult[] | null,
  output = new SandboxOutput(environment, false),
): number {
  for (const result of rendered ?? []) {
    if (result.text !== null && result.isMainResult) output.stdout(`${result.text}\n`);
    output.endLine(mode);
    for (const file of result.savedFiles)
      status(environment, mode, `saved ${result.mimeTypes.filter((type) => SAVED_TYPES[type]).join(", ")} result to ${file}`);
  }
  if (execution.error) {
    // Backends that stream the traceback on stderr have shown it already.
    const traceback = execution.error.traceback.trim();
    if (!traceback) {
      output.endLine(mode);
      output.stderr(`${execution.error.name}: ${execution.error.value}\n`);
    } else if (!execution.stderr.includes(traceback)) output.stderr(`${traceback}\n`);
    return 1;
  }
  return 0;
}

/**
 * `sbx code [--target URI] [--language python] [--out-dir DIR] FILE|-`: runs code in a fresh sandbox, streams its
 * stdout/stderr, prints the main result and saves image results to files (saying where). Exits 1 when the code raised.
 */
export async function codeCommand(environment: CliEnvironment, mode: OutputMode, flags: CodeFlags, positionals: string[]): Promise<number> {
  if (positionals.length !== 1) throw new UsageError("sbx code needs exactly one FILE, or - to read the code from standard input.");
  const source = await readSource(environment, positionals[0]!);
  const request = sandboxRequestFromFlags(environment, flags);
  const sandbox = await createCliSandbox(environment, mode, request);
  try {
    const output = new SandboxOutput(environment, flags["raw-output"] === true);
    const execution = await sandbox.runCode(source, {
      language: flags.language,
      timeoutMs: request.timeoutMs,
      signal: environment.signal,
      ...streamToTerminal(output, mode),
    });
    const rendered =
      execution.results === null
        ? null
        : await saveRichResults(execution.results, resolve(environment.cwd, flags["out-dir"] ?? "."), environment.cwd);
    if (mode.json) {
      environment.stdout.write(
        `${JSON.stringify(
          {
            sandbox: { id: sandbox.id, backend: sandbox.backend },
            stdout: execution.stdout,
            stderr: execution.stderr,
            error: execution.error,
            results: rendered,
            durationMs: execution.durationMs,
          },
          null,
          2,
        )}\n`,
      );
      return execution.error ? 1 : 0;
    }
    return printExecution(environment, mode, execution, rendered, output);
  } finally {
    await sandbox.kill().catch(() => undefined);
  }
}
