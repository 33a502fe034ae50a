/** One shell word: `'…'` with every `'` written as `'\''`, so the shell passes it through unchanged. */
export function shellQuote(word: string): string {
  return `'${word.replace(/'/g, "'\\''")}'`;
}
