import type { z } from "zod";
import { InvalidArgumentError } from "../errors/index.js";

/** Parses `value` with a zod schema, turning the first issue into an `InvalidArgumentError` that names the field. */
export function validate<Schema extends z.ZodType>(schema: Schema, value: unknown, parameter: string): z.output<Schema> {
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0]!;
  const field = [parameter, ...issue.path.map(String)].filter(Boolean).join(".");
  throw new InvalidArgumentError({ field, message: `Invalid ${field}: ${issue.message}.` });
}

/** Requires a non-empty string argument. */
export function requireString(value: unknown, parameter: string): string {
  if (typeof value !== "string" || value.length === 0) {
    throw new InvalidArgumentError({ field: parameter, message: `Invalid ${parameter}: expected a non-empty string, got ${value === null ? "null" : typeof value}.` });
  }
  return value;
}
