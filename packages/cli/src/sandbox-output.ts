import { neutraliseControlCharacters } from "./terminal-sanitiser.js";
import type { CliEnvironment, CliStream, OutputMode } from "./terminal.js";

/**
 * Writes what a sandbox printed to the CLI's own stdout and stderr. On a terminal, control characters are shown
 * escaped (`^[]52;...`) unless `--raw-output` asked for the bytes as they are, so sandbox output cannot set the
 * window title, write the clipboard, move the cursor or conceal text, and cannot draw sbx's styled status prefix.
 * Not on a terminal (a pipe or a file), the bytes pass unchanged. Remembers whether the last character written ended
 * a line, so sbx's next status line starts on a line of its own.
 */
export class SandboxOutput {
  private atLineStart = true;

  constructor(
    private readonly environment: CliEnvironment,
    private readonly rawOutput: boolean,
  ) {}

  /** Writes sandbox stdout. */
  readonly stdout = (text: string): void => this.write(this.environment.stdout, text);

  /** Writes sandbox stderr. */
  readonly stderr = (text: string): void => this.write(this.environment.stderr, text);

  /** Before an sbx status line on a terminal: ends the sandbox's unfinished line so the status starts at column 0. */
  endLine(mode: OutputMode): void {
    if (this.atLineStart || mode.quiet || mode.json || this.environment.stderr.isTTY !== true) return;
    this.environment.stderr.write("\n");
    this.atLineStart = true;
  }

  private write(stream: CliStream, text: string): void {
    if (text.length === 0) return;
    stream.write(stream.isTTY === true && !this.rawOutput ? neutraliseControlCharacters(text) : text);
    this.atLineStart = text.endsWith("\n");
  }
}
