import { shellQuote } from "@sbx/core/adapter";
import { UsageError } from "../errors.js";
import { parseUploads } from "../options.js";
import { createCliSandbox, sandboxRequestFromFlags, streamToTerminal, uploadWithProgress, type SandboxFlags } from "../sandbox-session.js";
import { SandboxOutput } from "../sandbox-output.js";
import type { CliEnvironment, OutputMode } from "../terminal.js";
import { status } from "../terminal.js";

/** Flags of `sbx run`. */
export interface RunFlags extends SandboxFlags {
  upload?: string[];
}

/** Shell-quotes one argument so `sbx run -- ls "a b"` runs `ls 'a b'` (plain words stay as they are, for readable logs). */
function quote(argument: string): string {
  return /^[A-Za-z0-9_@%+=:,./-]+$/.test(argument) ? argument : shellQuote(argument);
}

/**
 * `sbx run [--target URI] [--network deny|allow|HOSTS] [--timeout 30s] [--env K=V]... [--upload FILE[:PATH]]... -- COMMAND...`:
 * creates a sandbox, streams the command's output, removes the sandbox and exits with the command's exit code.
 * One argument after `--` is run as a shell command line; several are quoted and joined.
 */
export async function runCommand(environment: CliEnvironment, mode: OutputMode, flags: RunFlags, positionals: string[]): Promise<number> {
  if (positionals.length === 0) throw new UsageError("sbx run needs a command after --, for example: sbx run -- python3 -c 'print(1)'");
  const commandLine = positionals.length === 1 ? positionals[0]! : positionals.map(quote).join(" ");
  const request = sandboxRequestFromFlags(environment, flags);
  const uploads = parseUploads(flags.upload);
  const sandbox = await createCliSandbox(environment, mode, request);
  try {
    for (const upload of uploads) await uploadWithProgress(environment, mode, sandbox, upload);
    const output = new SandboxOutput(environment, flags["raw-output"] === true);
    const result = await sandbox.commands.run(commandLine, {
      timeoutMs: request.timeoutMs,
      signal: environment.signal,
      ...streamToTerminal(output, mode),
    });
    if (mode.json) {
      environment.stdout.write(
        `${JSON.stringify(
          {
            sandbox: { id: sandbox.id, backend: sandbox.backend },
            command: commandLine,
            exitCode: result.exitCode,
            stdout: result.stdout,
            stderr: result.stderr,
            truncated: result.truncated,
            durationMs: result.durationMs,
          },
          null,
          2,
        )}\n`,
      );
    } else {
      output.endLine(mode);
      if (result.truncated.stdout || result.truncated.stderr)
        status(
          environment,
          mode,
          `output was cut at the limit (${result.totalBytes.stdout} bytes on stdout, ${result.totalBytes.stderr} on stderr in total)`,
        );
      status(environment, mode, `exit code ${result.exitCode}`);
    }
    return result.exitCode;
  } finally {
    await sandbox.kill().catch(() => undefined);
  }
}
