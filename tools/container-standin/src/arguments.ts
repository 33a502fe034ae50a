import { usageError } from "./cli-failure.js";

/** One option a command accepts: its spellings and whether it takes a value. */
export interface OptionSpec {
  readonly names: readonly string[];
  readonly value: boolean;
}

/** Parsed options (keyed by the long spelling; repeatable values collected) and the positional arguments. */
export interface ParsedArguments {
  readonly options: Map<string, string[]>;
  readonly positionals: string[];
}

/**
 * Parses `args` as swift-argument-parser does for the CLI's commands: options first; with `passthroughAfter` set,
 * every token after that many positionals (the image of `run`, the id of `exec`) belongs to the process, `-i` and a
 * literal `--` included (`captureForPassthrough`). An unknown option is a usage error (exit 64).
 */
export function parseArguments(args: readonly string[], specs: readonly OptionSpec[], command: string, passthroughAfter?: number): ParsedArguments {
  const options = new Map<string, string[]>();
  const positionals: string[] = [];
  for (let index = 0; index < args.length; index++) {
    const token = args[index]!;
    if (passthroughAfter !== undefined && positionals.length >= passthroughAfter) {
      positionals.push(...args.slice(index));
      break;
    }
    if (token.startsWith("-") && token.length > 1) {
      const equals = token.startsWith("--") ? token.indexOf("=") : -1;
      const name = equals > 0 ? token.slice(0, equals) : token;
      const spec = specs.find((candidate) => candidate.names.includes(name));
      if (!spec) throw usageError(`Unknown option '${name}'`, command);
      const key = spec.names.find((spelling) => spelling.startsWith("--")) ?? spec.names[0]!;
      if (spec.value) {
        const value = equals > 0 ? token.slice(equals + 1) : args[++index];
        if (value === undefined) throw usageError(`Missing value for '${name} <${key.replace(/^-+/, "")}>'`, command);
        options.set(key, [...(options.get(key) ?? []), value]);
      } else {
        options.set(key, [...(options.get(key) ?? []), ""]);
      }
      continue;
    }
    positionals.push(token);
  }
  return { options, positionals };
}

/** The last value of an option, or undefined. */
export function lastValue(parsed: ParsedArguments, name: string): string | undefined {
  const values = parsed.options.get(name);
  return values?.[values.length - 1];
}

/** Whether a flag was given. */
export function hasFlag(parsed: ParsedArguments, name: string): boolean {
  return parsed.options.has(name);
}

/** Every value of a repeatable option. */
export function allValues(parsed: ParsedArguments, name: string): string[] {
  return parsed.options.get(name) ?? [];
}
