import { z } from "zod";
import type { MatchesSchema, SchemaMatches } from "./schema-match.js";

/**
 * The capabilities a backend may declare. Each adapter declares a static manifest, fixed for its lifetime;
 * asking for a capability that is off raises `CapabilityNotSupportedError`, never a silent emulation.
 */
export const CAPABILITY_NAMES = [
  /** Persistent code contexts: `createCodeContext()` and `runCode(code, { contextId })`. */
  "STATEFUL_CODE",
  /** Jupyter-style MIME results from the backend's own channel; without it `Execution.results` is `null`. */
  "RICH_RESULTS",
  /** `network: { egress: "deny", allow: [...] }`: a host allowlist enforced by the backend. */
  "EGRESS_ALLOWLIST",
  /** `commands.start()`: background commands with a handle. */
  "BACKGROUND_COMMANDS",
  /** `stdin` for commands and `writeStdin()` on handles. */
  "STDIN",
  /** `mounts`: host folders visible inside the sandbox. */
  "HOST_MOUNTS",
  /** `connectSandbox(target, id)`: attach to a live sandbox by id from another process. */
  "RECONNECT",
  /** `limits` (cpus, memoryMiB, pids) enforced by the backend. */
  "RESOURCE_LIMITS",
  /** `listSandboxes(target, { labels })`: the backend's live sandboxes with the labels (`metadata`) given at create (ADR 0050). */
  "LIST_SANDBOXES",
  /** `getOrCreateSandbox(target, { name })`: one sandbox per name, exactly one creator when processes race (ADR 0050). */
  "NAMED_SANDBOXES",
  /** `sandbox.setLifetime({ timeoutMs })`: a live sandbox's lifetime changed from the host, enforced out of its reach (ADR 0050). */
  "SET_LIFETIME",
  /** `files.watch()`: create, write, remove and rename events for a workspace path, in order, bounded (ADR 0049). */
  "FILE_WATCH",
  /** Interactive terminals: a process on a pseudo-terminal with resize and raw bytes (ADR 0049). */
  "PTY",
  /** `ports.expose(port)`: a loopback URL reaching a server inside the sandbox, with no egress given to it (ADR 0053). */
  "PORTS",
  /** `sandbox.pause()` / `sandbox.resume()`: every process stopped with its memory kept, the lifetime still enforced (ADR 0055). */
  "PAUSE",
  /** `sandbox.snapshot()`, `createSandbox(target, { fromSnapshot })`, `forkSandbox()`, `listSnapshots()`, `deleteSnapshot()`: filesystem snapshots (ADR 0056). */
  "SNAPSHOTS",
] as const;

/** One capability name. */
export type CapabilityName = (typeof CAPABILITY_NAMES)[number];

/** A backend's capability manifest: a flag per capability and the languages `runCode` accepts. */
export type Capabilities = Readonly<Record<CapabilityName, boolean>> & {
  /** Languages `runCode` accepts, for example `["python"]`. Empty when `runCode` is unsupported. */
  readonly languages: readonly string[];
};

/** zod schema every manifest must pass. */
export const capabilitiesSchema = z
  .object({
    STATEFUL_CODE: z.boolean(),
    RICH_RESULTS: z.boolean(),
    EGRESS_ALLOWLIST: z.boolean(),
    BACKGROUND_COMMANDS: z.boolean(),
    STDIN: z.boolean(),
    HOST_MOUNTS: z.boolean(),
    RECONNECT: z.boolean(),
    RESOURCE_LIMITS: z.boolean(),
    LIST_SANDBOXES: z.boolean(),
    NAMED_SANDBOXES: z.boolean(),
    SET_LIFETIME: z.boolean(),
    FILE_WATCH: z.boolean(),
    PTY: z.boolean(),
    PORTS: z.boolean(),
    PAUSE: z.boolean(),
    SNAPSHOTS: z.boolean(),
    languages: z.array(z.string().min(1)).readonly(),
  })
  .strict();

/** `Capabilities` and its schema name the same fields (every capability name and `languages`). */
// eslint-disable-next-line @typescript-eslint/no-unused-vars -- a compile-time check: the alias fails to type-check when schema and type drift
type CapabilitiesMatch = MatchesSchema<SchemaMatches<typeof capabilitiesSchema, Capabilities>>;

/**
 * Builds a frozen manifest. Unlisted capabilities default to off, so a new capability never turns on by accident.
 * @example defineCapabilities({ STDIN: true, languages: ["python"] })
 */
export function defineCapabilities(declared: Partial<Record<CapabilityName, boolean>> & { languages?: readonly string[] }): Capabilities {
  const flags = Object.fromEntries(CAPABILITY_NAMES.map((name) => [name, declared[name] ?? false]));
  // zod's `.readonly()` freezes the languages array; the manifest itself is frozen here.
  return Object.freeze(capabilitiesSchema.parse({ ...flags, languages: [...(declared.languages ?? [])] }));
}

/**
 * Returns a copy of `base` with some capabilities turned off (never on). Used by the fake to simulate
 * a narrower backend, and by wrappers that hide features.
 */
export function narrowCapabilities(
  base: Capabilities,
  narrowing: Partial<Record<CapabilityName, boolean>> & { languages?: readonly string[] },
): Capabilities {
  const next: Parameters<typeof defineCapabilities>[0] = { ...base };
  for (const name of CAPABILITY_NAMES) {
    if (narrowing[name] === false) next[name] = false;
  }
  if (narrowing.languages) next.languages = base.languages.filter((language) => narrowing.languages!.includes(language));
  return defineCapabilities(next);
}
