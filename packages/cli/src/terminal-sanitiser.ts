/**
 * Renders control characters in sandbox output visibly instead of letting the terminal act on them: ESC (which starts
 * every colour, cursor, title, clipboard and conceal sequence) becomes `^[`, BEL `^G`, other C0 characters their caret
 * form, DEL `^?`, C1 characters (U+0080 to U+009F: some terminals take U+009B as CSI) and bidirectional overrides (which
 * reorder what is shown) a `\uXXXX` escape. Newline, tab and carriage return pass: they only move the cursor within
 * the sandbox's own lines. Each character is mapped on its own, so a sequence split across chunks is neutralised
 * piece by piece with no state, and the output grows at most six times.
 */
export function neutraliseControlCharacters(text: string): string {
  return text.replace(CONTROL_CHARACTERS, renderControlCharacter);
}

/** Every character `neutraliseControlCharacters` rewrites. */
// eslint-disable-next-line no-control-regex -- matching control characters is this pattern's whole job
const CONTROL_CHARACTERS = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;

/** The visible form of one control character. */
function renderControlCharacter(character: string): string {
  const code = character.charCodeAt(0);
  if (code < 0x20) return `^${String.fromCharCode(code + 0x40)}`;
  if (code === 0x7f) return "^?";
  return `\\u${code.toString(16).padStart(4, "0")}`;
}
