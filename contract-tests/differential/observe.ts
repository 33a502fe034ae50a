import type { Sandbox } from "@sbx/core";
import { shellQuote } from "@sbx/core/adapter";
import type { CorpusEntry } from "./corpus.js";

/** What one entry produced on one backend, normalised. `exitCode` is null for code (an `error` line takes its place). */
export interface Observation {
  readonly stdout: string;
  readonly stderr: string;
  readonly exitCode: number | null;
  /** `Name: value` of the error runCode reported, or null. */
  readonly error: string | null;
  /** Which streams went past `outputLimitBytes`. */
  readonly truncated: string;
}

/** The fields compared, in report order. */
export const OBSERVED_FIELDS = ["stdout", "stderr", "exitCode", "error", "truncated"] as const;
export type ObservedField = (typeof OBSERVED_FIELDS)[number];

/** Which backend an entry runs on: the fake runs scripts as written (its shell is bash); Docker needs `bash -c` for bash entries. */
export type BackendKind = "fake" | "docker";

/** Whether bytes are valid UTF-8 (output that is not is compared byte for byte, as hex). */
function isUtf8(bytes: Uint8Array): boolean {
  try {
    new TextDecoder("utf-8", { fatal: true }).decode(bytes);
    return true;
  } catch {
    return false;
  }
}

/**
 * Normalisation, applied to both sides alike, only where text legitimately differs:
 *  - the shell's own name and line prefix in its error messages (`bash: line 1: `, `sh: 1: `, just-bash's `bash: `);
 *  - a Python traceback's frame lines (file names, carets and code lines vary between CPython 3.11 and 3.13/3.14):
 *    the header and the final exception line are kept;
 *  - the entry's own working directory, written as `<cwd>`;
 *  - the pseudo file name of submitted code (`<code>` on the fake, `<cell-N>` through the sbx sandbox agent).
 */
export function normalise(text: string, cwd: string): string {
  let result = text.replaceAll(cwd, "<cwd>");
  result = result.replace(/^(?:bash: line \d+|sh: \d+|bash): /gm, "<shell>: ");
  // The pseudo file name a runtime gives submitted code: the fake's Pyodide says <code>, the sbx agent <cell-N>.
  result = result.replace(/<cell-\d+>/g, "<code>");
  result = result.replace(/^Traceback \(most recent call last\):\n(?:[ \t].*\n|\^+\n)*/gm, "Traceback (most recent call last):\n  <frames>\n");
  return result;
}

/** Runs one entry on a sandbox in the folder `cwd` (created by the caller) and normalises what it produced. */
export async function observe(sandbox: Sandbox, backend: BackendKind, entry: CorpusEntry, cwd: string): Promise<Observation> {
  if (entry.kind === "shell") {
    const command = backend === "docker" && (entry.dialect ?? "bash") === "bash" ? `bash -c ${shellQuote(entry.script)}` : entry.script;
    const result = await sandbox.commands.run(command, {
      cwd,
      stdin: entry.stdin,
      timeoutMs: 60_000,
      outputLimitBytes: entry.outputLimitBytes,
    });
    return {
      stdout: isUtf8(result.stdoutBytes) ? normalise(result.stdout, cwd) : `bytes ${Buffer.from(result.stdoutBytes).toString("hex")}`,
      stderr: normalise(result.stderr, cwd),
      exitCode: result.exitCode,
      error: null,
      truncated: `stdout=${result.truncated.stdout} stderr=${result.truncated.stderr}`,
    };
  }
  if (entry.kind === "code" || !sandbox.capabilities.STATEFUL_CODE) {
    const source = entry.kind === "code" ? entry.code : entry.cells.join("\n");
    const execution = await sandbox.runCode(source, { timeoutMs: 60_000 });
    return {
      stdout: normalise(execution.stdout, cwd),
      stderr: normalise(execution.stderr, cwd),
      exitCode: null,
      error: execution.error ? normalise(`${execution.error.name}: ${execution.error.value}`, cwd) : null,
      truncated: "n/a",
    };
  }
  const context = await sandbox.createCodeContext();
  let stdout = "";
  let stderr = "";
  let error: string | null = null;
  for (const cell of entry.cells) {
    const execution = await sandbox.runCode(cell, { contextId: context.id, timeoutMs: 60_000 });
    stdout += execution.stdout;
    stderr += execution.stderr;
    if (execution.error) {
      error = normalise(`${execution.error.name}: ${execution.error.value}`, cwd);
      break;
    }
  }
  return { stdout: normalise(stdout, cwd), stderr: normalise(stderr, cwd), exitCode: null, error, truncated: "n/a" };
}

/** Runs `task` over `items` with at most `concurrency` at once; results in input order. */
export async function mapWithConcurrency<T, R>(items: readonly T[], concurrency: number, task: (item: T, index: number) => Promise<R>): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  const workers = Array.from({ length: Math.min(concurrency, items.length) }, async () => {
    while (next < items.length) {
      const index = next++;
      results[index] = await task(items[index]!, index);
    }
  });
  await Promise.all(workers);
  return results;
}
