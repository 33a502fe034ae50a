/**
 * JSON as Swift's `JSONEncoder` with `.sortedKeys` writes it: keys sorted, `/` escaped as `\/` up to 1.3.x (1.4.1
 * stopped escaping it, apple/container#2205), and with `.prettyPrinted` two-space indentation and `"key" : value`.
 */
export function swiftJson(value: unknown, options: { pretty: boolean; escapeSlashes: boolean }): string {
  const text = options.pretty ? pretty(value, "") : compact(value);
  return options.escapeSlashes ? text.replace(/\//g, "\\/") : text;
}

function sortedEntries(value: object): Array<[string, unknown]> {
  return Object.entries(value)
    .filter(([, entry]) => entry !== undefined)
    .sort(([left], [right]) => (left < right ? -1 : left > right ? 1 : 0));
}

function compact(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(compact).join(",")}]`;
  if (value !== null && typeof value === "object")
    return `{${sortedEntries(value)
      .map(([key, entry]) => `${JSON.stringify(key)}:${compact(entry)}`)
      .join(",")}}`;
  return JSON.stringify(value);
}

function pretty(value: unknown, indent: string): string {
  const inner = `${indent}  `;
  if (Array.isArray(value)) {
    if (value.length === 0) return "[]";
    return `[\n${value.map((entry) => inner + pretty(entry, inner)).join(",\n")}\n${indent}]`;
  }
  if (value !== null && typeof value === "object") {
    const entries = sortedEntries(value);
    if (entries.length === 0) return "{}";
    return `{\n${entries.map(([key, entry]) => `${inner}${JSON.stringify(key)} : ${pretty(entry, inner)}`).join(",\n")}\n${indent}}`;
  }
  return JSON.stringify(value);
}
