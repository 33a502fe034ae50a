import type { z } from "zod";
import { InvalidArgumentError } from "../errors/index.js";

/** Parses `value` with a zod schema, turning the first issue into an `InvalidArgumentError` that names the field. */
export function validate<Schema extends z.ZodType>(schema: Schema, value: unknown, parameter: string): z.output<Schema> {
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0]!;
  const path = issue.path.map(String);
  // Name the offending key itself, not just the object holding it.
  if (issue.code === "unrecognized_keys" && issue.keys.length > 0) path.push(issue.keys[0]!);
  const field = [parameter, ...path].filter(Boolean).join(".");
  // zod reports a bad record key as "Invalid key in record"; the key schema's own message says why.
  const detail = issue.code === "invalid_key" && issue.issues[0] ? `invalid key: ${issue.issues[0].message}` : issue.message;
  throw new InvalidArgumentError({ field, message: `Invalid ${field}: ${detail}.` });
}

/** Requires a non-empty string argument. */
export function requireString(value: unknown, parameter: string): string {
  if (typeof value !== "string" || value.length === 0) {
    throw new InvalidArgumentError({
      field: parameter,
      message: `Invalid ${parameter}: expected a non-empty string, got ${value === null ? "null" : typeof value}.`,
    });
  }
  return value;
}
