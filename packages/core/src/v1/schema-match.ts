import type { z } from "zod";

/**
 * Compile-time check that a zod schema and the documented interface it validates describe the same thing: the same
 * keys, and every value the schema outputs is a valid `Documented`. `true` when they match, `false` otherwise, so
 * `type Check = MatchesSchema<SchemaMatches<typeof schema, Interface>>` stops compiling as soon as either side
 * drifts (a field added to the interface but not the strict schema would be refused at run time).
 */
export type SchemaMatches<Schema extends z.ZodType, Documented> = [
  Exclude<keyof z.input<Schema>, keyof Documented>,
  Exclude<keyof Documented, keyof z.input<Schema>>,
] extends [never, never]
  ? z.output<Schema> extends Documented
    ? true
    : false
  : false;

/** Compiles only when given `true` (see `SchemaMatches`). */
export type MatchesSchema<Check extends true> = Check;
