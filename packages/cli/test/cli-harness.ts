import { runCli, type CliEnvironment } from "../src/index.js";

/** What one in-process `sbx` invocation printed and returned. */
export interface CliOutcome {
  exitCode: number;
  stdout: string;
  stderr: string;
}

/** Runs `sbx ...argv` in this process with captured streams (no terminal unless `terminal: true`). */
export async function sbx(
  argv: string[],
  options: { env?: Record<string, string>; stdin?: string; terminal?: boolean; cwd?: string } = {},
): Promise<CliOutcome> {
  let stdout = "";
  let stderr = "";
  const environment: CliEnvironment = {
    argv,
    stdout: { write: (text: string) => (stdout += text), isTTY: options.terminal === true },
    stderr: { write: (text: string) => (stderr += text), isTTY: options.terminal === true },
    stdin: (async function* () {
      if (options.stdin !== undefined) yield Buffer.from(options.stdin);
    })(),
    env: { ...options.env },
    cwd: options.cwd ?? process.cwd(),
  };
  const exitCode = await runCli(environment);
  return { exitCode, stdout, stderr };
}

/** Replaces run-specific values (sandbox ids, durations, temp paths) with stable placeholders for snapshots. */
export function normalise(text: string): string {
  return text
    .replace(/fake-\d+-[0-9a-f]+/g, "<fake-id>")
    .replace(/\b[0-9a-f]{64}\b/g, "<docker-id>")
    .replace(/"durationMs": \d+(\.\d+)?/g, '"durationMs": <ms>')
    .replace(/\/tmp\/[^\s"']+/g, "<tmp>");
}
