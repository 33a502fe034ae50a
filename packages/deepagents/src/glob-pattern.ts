const REGULAR_EXPRESSION_SPECIALS = new Set([".", "+", "^", "$", "{", "}", "(", ")", "|", "\\"]);

/**
 * A regular expression for a glob matched against a path relative to the search root, with the meanings
 * deepagents documents for its glob tool: `*` any characters but `/`, `**` any characters including `/` (`**\/`
 * zero or more folders), `?` one character but `/`, `[...]` a character class.
 */
export function globPattern(glob: string): RegExp {
  let source = "^";
  let index = 0;
  while (index < glob.length) {
    const character = glob[index]!;
    if (character === "*" && glob[index + 1] === "*") {
      const folders = glob[index + 2] === "/";
      source += folders ? "(?:.*/)?" : ".*";
      index += folders ? 3 : 2;
    } else if (character === "*") {
      source += "[^/]*";
      index += 1;
    } else if (character === "?") {
      source += "[^/]";
      index += 1;
    } else if (character === "[" && glob.indexOf("]", index + 1) > index + 1) {
      const close = glob.indexOf("]", index + 1);
      const members = glob
        .slice(index + 1, close)
        .replace(/^!/, "^")
        .replace(/\\/g, "\\\\");
      source += `[${members}]`;
      index = close + 1;
    } else {
      source += REGULAR_EXPRESSION_SPECIALS.has(character) ? `\\${character}` : character;
      index += 1;
    }
  }
  return new RegExp(`${source}$`);
}
