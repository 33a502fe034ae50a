/**
 * An exec with `pty_info` (`exec(argv, { pty: true })`): the process runs on a real pseudo-terminal in the sandbox's
 * container (a `docker exec` with `Tty`, the process a session leader with the terminal as its controlling terminal),
 * its output is the exec's stdout. The Docker Engine here (API 1.41) cannot size an exec at creation, so the wrapper
 * sets the size `pty_info` asks for with `stty` before the command runs. Modal has no resize; neither has this.
 */

/** The terminal an exec asked for. */
export interface ExecTerminal {
  readonly rows: number;
  readonly cols: number;
  /** `TERM` for the process (`env_term`). */
  readonly term: string;
}

/** `PTYInfo` as the ts-proto codec decodes it. */
interface PtyInfoMessage {
  enabled?: boolean;
  winszRows?: number;
  winszCols?: number;
  envTerm?: string;
}

/** The terminal of a `TaskExecStart`'s `pty_info`, or undefined when none is enabled (Modal's defaults: 24×80, xterm-256color). */
export function terminalOf(ptyInfo: PtyInfoMessage | undefined): ExecTerminal | undefined {
  if (!ptyInfo?.enabled) return undefined;
  const side = (value: number | undefined, fallback: number) => (value && value > 0 && value <= 65_535 ? value : fallback);
  return { rows: side(ptyInfo.winszRows, 24), cols: side(ptyInfo.winszCols, 80), term: ptyInfo.envTerm || "xterm-256color" };
}

/** The wrapper's argv: size the terminal, record the pid in `pidFile` (the kill's), then become the command. */
export function terminalCommand(pidFile: string, terminal: ExecTerminal, argv: readonly string[]): string[] {
  return [
    "/bin/sh",
    "-c",
    'stty cols "$1" rows "$2" 2>/dev/null; echo $$ > "$0"; shift 2; exec "$@"',
    pidFile,
    String(terminal.cols),
    String(terminal.rows),
    ...argv,
  ];
}
