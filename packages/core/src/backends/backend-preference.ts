import { InvalidArgumentError } from "../errors/index.js";

/** Order in which `"auto"` tries isolating backends when the user states no preference. */
export const AUTO_PREFERENCE_ORDER: readonly string[] = ["docker", "apple-container", "e2b", "modal"];

/** The environment variable that states which backends `"auto"` may use, in order: `SBX_BACKENDS=docker,e2b`. */
export const BACKENDS_ENVIRONMENT_VARIABLE = "SBX_BACKENDS";

const SCHEME_PATTERN = /^[a-z][a-z0-9+.-]*$/;

/**
 * Parses a backend preference (`["docker", "e2b"]` or `"docker,e2b"`): names are case-insensitive, spaces around
 * commas are allowed, duplicates keep their first place. An empty entry or a name that is not a scheme is refused
 * with `InvalidArgumentError` naming `field`.
 */
export function parseBackendPreference(value: readonly string[] | string, field: string): string[] {
  const entries = typeof value === "string" ? value.split(",") : [...value];
  const names: string[] = [];
  for (const [index, entry] of entries.entries()) {
    const name = typeof entry === "string" ? entry.trim().toLowerCase() : "";
    if (!SCHEME_PATTERN.test(name)) {
      throw new InvalidArgumentError({
        field: typeof value === "string" ? field : `${field}.${index}`,
        message: `Invalid ${field}: ${JSON.stringify(entry)} is not a backend name. Give backend schemes in order of preference, for example ${typeof value === "string" ? '"docker,e2b"' : '["docker", "e2b"]'}.`,
      });
    }
    if (!names.includes(name)) names.push(name);
  }
  if (names.length === 0)
    throw new InvalidArgumentError({ field, message: `Invalid ${field}: the list is empty; name at least one backend, for example "docker".` });
  return names;
}

/** Where the preference came from, for error messages. */
export interface BackendPreference {
  /** Backends in the order `"auto"` tries them. */
  readonly order: string[];
  /** `"option"` (`backends`), `"environment"` (`SBX_BACKENDS`) or `"default"`. */
  readonly source: "option" | "environment" | "default";
}

/**
 * The backends `"auto"` tries, in order. The `backends` option wins over `SBX_BACKENDS`; with neither, the first-party
 * isolating backends in `AUTO_PREFERENCE_ORDER` come first, then every isolating backend registered with
 * `registerProvider` (`registered`: scheme and whether it isolates) in registration order, then the fake when `allowFake` is true. A stated preference is
 * also a limit: `"auto"` tries only the backends named.
 */
export function orderAutoBackends(
  options: {
    backends?: readonly string[] | string;
    allowFake?: boolean;
    registered?: Iterable<[string, boolean]>;
    environment?: Readonly<Record<string, string | undefined>>;
  } = {},
): BackendPreference {
  if (options.backends !== undefined) return { order: parseBackendPreference(options.backends, "backends"), source: "option" };
  const fromEnvironment = (options.environment ?? process.env)[BACKENDS_ENVIRONMENT_VARIABLE];
  if (fromEnvironment !== undefined && fromEnvironment.trim() !== "")
    return { order: parseBackendPreference(fromEnvironment, BACKENDS_ENVIRONMENT_VARIABLE), source: "environment" };
  const order = [...AUTO_PREFERENCE_ORDER];
  for (const [scheme, isolating] of options.registered ?? []) if (isolating && !order.includes(scheme)) order.push(scheme);
  if (options.allowFake && !order.includes("fake")) order.push("fake");
  return { order, source: "default" };
}
