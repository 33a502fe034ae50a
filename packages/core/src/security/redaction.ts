/**
 * Secret redaction. A secret can leave a sandbox in other shapes than its raw value: a program may print it
 * base64-encoded, URL-encoded or hex-encoded, and a JSON text (an engine's error body, a serialised record)
 * escapes quotes, backslashes and control characters. Every one of those forms is replaced by `[redacted]`.
 * Redaction runs on text and on structured values (strings inside objects), never on serialised JSON, so a secret
 * whose value also occurs in the JSON syntax cannot corrupt a record.
 */

/** What a redacted secret is replaced with. */
export const REDACTED = "[redacted]";

/**
 * Shortest secret value `createSandbox` accepts. A shorter value ("1", "true", "none") occurs by chance in
 * unrelated text (exit codes, policy names), so redacting it would destroy the text and tell an attacker what it is.
 */
export const MIN_SECRET_LENGTH = 8;

function base64Forms(bytes: Buffer): string[] {
  const standard = bytes.toString("base64");
  const unpadded = standard.replace(/=+$/, "");
  const urlSafe = unpadded.replace(/\+/g, "-").replace(/\//g, "_");
  // The unpadded forms match the padded ones too (the `=` that follows is left, and tells nothing).
  return [unpadded, urlSafe];
}

function asciiJsonEscape(value: string): string {
  return JSON.stringify(value)
    .slice(1, -1)
    .replace(/[\u007f-\uffff]/g, (character) => `\\u${character.charCodeAt(0).toString(16).padStart(4, "0")}`);
}

/**
 * Every form a secret is recognised in: raw; base64 (standard and URL-safe, with or without padding);
 * URL-encoded (`encodeURIComponent`, form encoding with `+`, and every byte percent-encoded, either case);
 * hex (either case); JSON-escaped (as `JSON.stringify` and as Python's `json.dumps` with `ensure_ascii`).
 */
export function secretForms(secret: string): string[] {
  if (secret.length === 0) return [];
  const bytes = Buffer.from(secret, "utf8");
  const hex = bytes.toString("hex");
  const percentEverything = hex.replace(/../g, (pair) => `%${pair}`);
  const uriComponent = encodeURIComponent(secret);
  const forms = [
    secret,
    ...base64Forms(bytes),
    uriComponent,
    uriComponent.replace(/%[0-9A-F]{2}/g, (escape) => escape.toLowerCase()),
    uriComponent.replace(/%20/g, "+"),
    percentEverything,
    percentEverything.toUpperCase(),
    hex,
    hex.toUpperCase(),
    JSON.stringify(secret).slice(1, -1),
    asciiJsonEscape(secret),
  ];
  return [...new Set(forms.filter((form) => form.length > 0))];
}

/** Every form of every secret, longest first, so a secret containing another is never left half-visible. */
export function redactionPatterns(secrets: readonly string[]): string[] {
  const patterns = new Set<string>();
  for (const secret of secrets) for (const form of secretForms(secret)) patterns.add(form);
  return [...patterns].sort((left, right) => right.length - left.length);
}

/** Replaces every form of every secret value in a text with `[redacted]`. */
export function redactText(text: string, secrets: readonly string[]): string {
  if (typeof text !== "string" || text.length === 0 || secrets.length === 0) return text;
  let result = text;
  for (const pattern of redactionPatterns(secrets)) {
    if (result.includes(pattern)) result = result.split(pattern).join(REDACTED);
  }
  return result;
}

/**
 * Redacts every string inside a JSON-like value (objects, arrays, strings), returning a copy. Keys are kept, other
 * values (numbers, booleans, null, bytes) are returned as they are.
 */
export function redactValue<Value>(value: Value, secrets: readonly string[]): Value {
  if (secrets.length === 0) return value;
  if (typeof value === "string") return redactText(value, secrets) as Value;
  if (Array.isArray(value)) return value.map((item) => redactValue(item, secrets)) as Value;
  if (value && typeof value === "object" && (Object.getPrototypeOf(value) === Object.prototype || Object.getPrototypeOf(value) === null)) {
    const copy: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(value)) copy[key] = redactValue(item, secrets);
    return copy as Value;
  }
  return value;
}

/**
 * Removes secret values from an error in place: its message and stack, every string field (`path`, `partialStdout`,
 * ...), and the same for its causes. A frozen foreign error is left as it is (it is only kept as a cause).
 */
export function redactError<ErrorType>(error: ErrorType, secrets: readonly string[]): ErrorType {
  if (secrets.length === 0) return error;
  let current: unknown = error;
  for (let depth = 0; depth < 8 && current instanceof Error; depth++) {
    for (const key of [...Object.getOwnPropertyNames(current), "message", "stack"]) {
      if (key === "cause") continue;
      const descriptor = Object.getOwnPropertyDescriptor(current, key);
      if (!descriptor || !("value" in descriptor)) continue;
      const field = descriptor.value as unknown;
      if (typeof field !== "string" && (typeof field !== "object" || field === null || field instanceof Error)) continue;
      const redacted = redactValue(field, secrets);
      if (redacted === field || (typeof field === "string" && redacted === field)) continue;
      try {
        Object.defineProperty(current, key, { ...descriptor, value: redacted });
      } catch {
        // A frozen foreign error: leave it.
      }
    }
    current = (current as { cause?: unknown }).cause;
  }
  return error;
}
