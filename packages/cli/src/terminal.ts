/** Where the CLI writes, and what it knows about the terminal. Injected so tests run the CLI in-process. */
export interface CliStream {
  /** Writes text. */
  write(text: string): unknown;
  /** True when the stream is a terminal (progress bars and colours only then). */
  readonly isTTY?: boolean;
  /** Terminal width in columns, when a terminal. */
  readonly columns?: number;
}

/** Everything the CLI touches outside itself. */
export interface CliEnvironment {
  /** Command-line arguments after `sbx`. */
  readonly argv: readonly string[];
  /** Standard output: results and command output. */
  readonly stdout: CliStream;
  /** Standard error: status lines, progress, errors. */
  readonly stderr: CliStream;
  /** Standard input, for `sbx code -`. */
  readonly stdin: AsyncIterable<Uint8Array | string>;
  /** Environment variables (`NO_COLOR`, `SBX_TARGET`). */
  readonly env: Readonly<Record<string, string | undefined>>;
  /** Working directory, for relative host paths. */
  readonly cwd: string;
  /** Aborted on Ctrl-C: the running command is killed and the sandbox removed. */
  readonly signal?: AbortSignal;
  /** The user's terminal, for `sbx shell` (raw input, size, resize). Absent when not run from a terminal program. */
  readonly interactive?: CliInteractiveTerminal;
}

/** The user's terminal as `sbx shell` drives it (adr/0049). */
export interface CliInteractiveTerminal {
  /** True when both standard input and standard output are terminals. */
  readonly isTTY: boolean;
  /** The terminal's current size. */
  size(): { cols: number; rows: number };
  /** Raw mode on (every key, Ctrl-C included, goes to the sandbox) or off (restored). */
  setRawMode(raw: boolean): void;
  /** Calls `listener` with each chunk of input; returns the function that stops listening. */
  onInput(listener: (data: Uint8Array) => void): () => void;
  /** Calls `listener` when the terminal's size changes; returns the function that stops listening. */
  onResize(listener: () => void): () => void;
  /** Writes bytes to the terminal as they are. */
  write(data: Uint8Array): void;
}

/** Global output switches every command honours. */
export interface OutputMode {
  /** `--json`: one JSON document on stdout, nothing else there. */
  readonly json: boolean;
  /** `--quiet`: no status lines or progress; errors and command output still shown. */
  readonly quiet: boolean;
  /** Colours on: stderr is a terminal and neither `NO_COLOR` nor `--no-color` is set. */
  readonly color: boolean;
  /** stderr is a terminal: status lines carry a styled prefix that sanitised sandbox output cannot draw. */
  readonly terminal: boolean;
}

const CODES = { red: 31, green: 32, yellow: 33, dim: 2, bold: 1 } as const;

/** Wraps `text` in an ANSI colour when `enabled`. */
export function paint(enabled: boolean, colour: keyof typeof CODES, text: string): string {
  return enabled ? `\u001b[${CODES[colour]}m${text}\u001b[0m` : text;
}

/** Decides the output mode from flags and environment (NO_COLOR: any non-empty value turns colours off). */
export function outputMode(flags: { json?: boolean; quiet?: boolean; color?: boolean }, environment: CliEnvironment): OutputMode {
  const noColor = (environment.env.NO_COLOR ?? "") !== "" || flags.color === false;
  const terminal = environment.stderr.isTTY === true;
  return { json: flags.json === true, quiet: flags.quiet === true, color: !noColor && terminal, terminal };
}

/**
 * The `sbx:` prefix of status lines. On a terminal it is always styled (dim with colours, bold with `NO_COLOR`, which
 * turns off colour, not emphasis): sandbox output reaches a terminal with its escape characters shown as `^[`, so a
 * sandbox can print the words `sbx: exit code 0` but never this styled prefix. Plain off a terminal.
 */
export function statusPrefix(mode: OutputMode): string {
  if (!mode.terminal) return "sbx:";
  return paint(true, mode.color ? "dim" : "bold", "sbx:");
}

/** Writes a status line to stderr unless quiet or JSON. */
export function status(environment: CliEnvironment, mode: OutputMode, line: string): void {
  if (mode.quiet || mode.json) return;
  environment.stderr.write(`${statusPrefix(mode)} ${line}\n`);
}

/** Formats a byte count for people: `512 B`, `1.5 KiB`, `3.2 MiB`. */
export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KiB`;
  if (bytes < 1024 ** 3) return `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
  return `${(bytes / 1024 ** 3).toFixed(2)} GiB`;
}

// eslint-disable-next-line no-control-regex -- matching the ESC of ANSI colour sequences is the point
const ANSI_PATTERN = /\u001b\[[0-9;]*m/g;

/** Length as shown on a terminal (ANSI colour codes take no columns). */
function visibleLength(text: string): number {
  return text.replace(ANSI_PATTERN, "").length;
}

/** Renders rows as an aligned text table with a header. */
export function table(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const widths = header.map((title, column) => Math.max(title.length, ...rows.map((row) => visibleLength(row[column] ?? ""))));
  const pad = (cell: string, width: number) => cell + " ".repeat(Math.max(0, width - visibleLength(cell)));
  const line = (cells: readonly string[]) =>
    cells
      .map((cell, column) => (column === cells.length - 1 ? cell : pad(cell, widths[column]!)))
      .join("  ")
      .trimEnd();
  return [line(header), ...rows.map(line)].join("\n") + "\n";
}
