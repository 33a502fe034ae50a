import { shellQuote } from "@sbx/core/adapter";
import { UsageError } from "../errors.js";
import { createCliSandbox, sandboxRequestFromFlags, type SandboxFlags } from "../sandbox-session.js";
import { TerminalStringFilter } from "../terminal-string-filter.js";
import type { CliEnvironment, OutputMode } from "../terminal.js";
import { status } from "../terminal.js";

/** Shell-quotes one argument unless it is a plain word. */
function quote(argument: string): string {
  return /^[A-Za-z0-9_@%+=:,./-]+$/.test(argument) ? argument : shellQuote(argument);
}

/**
 * `sbx shell [--target URI] [--network ...] [--timeout 30s] [--env K=V]... [-- COMMAND...]`: an interactive terminal in
 * a new sandbox (ADR 0049). The user's terminal is put in raw mode (every key, Ctrl-C included, goes to the sandbox),
 * its size follows the window, the sandbox's output is passed through with its control strings dropped (no title or
 * clipboard writes), and `sbx` exits with the terminal's own exit code. Needs `PTY`.
 */
export async function shellCommand(environment: CliEnvironment, mode: OutputMode, flags: SandboxFlags, positionals: string[]): Promise<number> {
  const terminal = environment.interactive;
  if (!terminal?.isTTY) throw new UsageError("sbx shell needs a terminal: run it with standard input and output on a terminal.");
  if (mode.json) throw new UsageError("sbx shell is interactive: --json does not apply.");
  const command = positionals.length === 0 ? undefined : positionals.length === 1 ? positionals[0]! : positionals.map(quote).join(" ");
  const request = sandboxRequestFromFlags(environment, flags);
  const sandbox = await createCliSandbox(environment, mode, request);
  try {
    const filter = new TerminalStringFilter();
    const shell = await sandbox.terminals.create({
      ...(command === undefined ? {} : { command }),
      ...terminal.size(),
      timeoutMs: request.timeoutMs,
      signal: environment.signal,
      onData: (data) => terminal.write(filter.push(data)),
    });
    terminal.setRawMode(true);
    const stopResize = terminal.onResize(() => void shell.resize(terminal.size()).catch(() => undefined));
    const stopInput = terminal.onInput((data) => void shell.write(data).catch(() => undefined));
    try {
      const exit = await shell.wait();
      terminal.setRawMode(false);
      status(environment, mode, `exit code ${exit.exitCode}`);
      return exit.exitCode;
    } finally {
      stopInput();
      stopResize();
      terminal.setRawMode(false);
    }
  } finally {
    await sandbox.kill().catch(() => undefined);
  }
}
