/** Quotes one word for a POSIX shell: the word reaches the program exactly, whatever it contains. */
export function shellQuote(value: string): string {
  return `'${value.replace(/'/g, `'\\''`)}'`;
}

/** A `sh -c` command line running `script` with `$0` = `name` and `$1…` = `args`, every word quoted. */
export function shellScript(script: string, name: string, args: readonly string[] = []): string {
  return ["sh", "-c", script, name, ...args].map(shellQuote).join(" ");
}
