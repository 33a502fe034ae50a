import { InvalidArgumentError } from "@sbx/core";
import { validate } from "@sbx/core/adapter";
import { z } from "zod";
import type { ExecutionError } from "@sbx/core";

/** What a command handler sees. */
export interface CommandHandlerCall {
  /** The full command line. */
  readonly command: string;
  /** Absolute working directory. */
  readonly cwd: string;
  /** Environment the command would run with (secrets included: handlers run in your process). */
  readonly env: Readonly<Record<string, string>>;
  /** Standard input, when the command was given some (collected until stdin closed). */
  readonly stdin: string;
  /** The sandbox the command runs in. */
  readonly sandboxId: string;
}

/** What a command handler returns instead of running the command. */
export interface CommandHandlerResponse {
  /** Exit code. Default 0. */
  exitCode?: number;
  /** Standard output. Default empty. */
  stdout?: string;
  /** Standard error. Default empty. */
  stderr?: string;
}

/** Replaces matching commands with a programmed response (for agent tests: `git push`, `npm publish`, ...). */
export interface CommandHandler {
  /** A regular expression tested against the command line, an exact command line, or a predicate. */
  match: RegExp | string | ((command: string) => boolean);
  /** The response. May be async. */
  respond: (call: CommandHandlerCall) => CommandHandlerResponse | Promise<CommandHandlerResponse>;
}

/** What a code handler sees. */
export interface CodeHandlerCall {
  /** The source code. */
  readonly code: string;
  /** The language. */
  readonly language: string;
  /** The context id, when run in a context. */
  readonly contextId: string | undefined;
  /** The sandbox. */
  readonly sandboxId: string;
}

/** What a code handler returns instead of running the code. */
export interface CodeHandlerResponse {
  /** Standard output. */
  stdout?: string;
  /** Standard error. */
  stderr?: string;
  /** The error the code "raised", or null/undefined for success. */
  error?: ExecutionError | null;
}

/** Replaces matching `runCode` calls with a programmed response. */
export interface CodeHandler {
  /** A regular expression tested against the code, an exact source, or a predicate. */
  match: RegExp | string | ((code: string) => boolean);
  /** The response. May be async. */
  respond: (call: CodeHandlerCall) => CodeHandlerResponse | Promise<CodeHandlerResponse>;
}

const matcherSchema = z.union([
  z.instanceof(RegExp),
  z.string().min(1),
  z.custom<(value: string) => boolean>((value) => typeof value === "function", "must be a RegExp, a string or a function"),
]);
const respondSchema = z.custom<(call: never) => unknown>((value) => typeof value === "function", "must be a function");

/** zod schema for `createSandboxProvider(settings)`. Unknown keys are refused so typos surface. */
export const fakeSettingsSchema = z
  .object({
    /**
     * Turns capabilities off to simulate a narrower backend (`{ STATEFUL_CODE: false }`), or narrows `languages`.
     * Capabilities can only be turned off: `true` for one the fake lacks is refused.
     */
    capabilities: z
      .object({
        STATEFUL_CODE: z.boolean().optional(),
        RICH_RESULTS: z.literal(false).optional(),
        EGRESS_ALLOWLIST: z.boolean().optional(),
        BACKGROUND_COMMANDS: z.boolean().optional(),
        STDIN: z.boolean().optional(),
        HOST_MOUNTS: z.boolean().optional(),
        RECONNECT: z.literal(false).optional(),
        RESOURCE_LIMITS: z.literal(false).optional(),
        FILE_WATCH: z.boolean().optional(),
        PTY: z.literal(false).optional(),
        PORTS: z.literal(false).optional(),
        SNAPSHOTS: z.boolean().optional(),
        languages: z.array(z.string().min(1)).optional(),
      })
      .strict()
      .optional(),
    /** Programmed responses for commands and code. Checked in order; the first match wins. */
    handlers: z
      .object({
        commands: z.array(z.object({ match: matcherSchema, respond: respondSchema }).strict()).default([]),
        code: z.array(z.object({ match: matcherSchema, respond: respondSchema }).strict()).default([]),
      })
      .strict()
      .optional(),
    /** Absolute workspace path inside every sandbox. Default `"/workspace"`. */
    workspace: z
      .string()
      .regex(/^\/[A-Za-z0-9._\-/]*$/, "must be an absolute path of letters, digits, '.', '_', '-' and '/'")
      .refine((value) => value !== "/" && !value.split("/").includes(".."), "must not be '/' or contain '..'")
      .default("/workspace"),
    /**
     * Start loading Pyodide in the background when a sandbox is created, so the first `runCode` waits only for what
     * is left of the load. Default true; false loads it on the first `runCode` (saves CPU in runs that never use Python).
     */
    preloadPython: z.boolean().default(true),
    /** Files every new sandbox starts with, by path (relative paths are inside the workspace). Deprecated: see `FakeSettings.files`. */
    files: z.record(z.string().min(1), z.union([z.string(), z.instanceof(Uint8Array)])).default({}),
  })
  .strict();

/** Settings for `createSandboxProvider()` / `fake()`. Every field is optional. */
export interface FakeSettings {
  /** Turn capabilities off to simulate another backend, for example `{ STATEFUL_CODE: false }`. Only `false` narrows. */
  capabilities?: {
    STATEFUL_CODE?: boolean;
    RICH_RESULTS?: false;
    EGRESS_ALLOWLIST?: boolean;
    BACKGROUND_COMMANDS?: boolean;
    STDIN?: boolean;
    HOST_MOUNTS?: boolean;
    RECONNECT?: false;
    RESOURCE_LIMITS?: false;
    /** Off: no snapshots (ADR 0056), as on a backend without them. */
    SNAPSHOTS?: boolean;
    languages?: string[];
  };
  /** Programmed responses for commands and code; the first match wins. */
  handlers?: { commands?: CommandHandler[]; code?: CodeHandler[] };
  /** Absolute workspace path. Default `"/workspace"`. */
  workspace?: string;
  /**
   * Files every new sandbox starts with. Relative paths are inside the workspace.
   * @deprecated Use the portable create option `createSandbox(target, { files: [{ path, content }] })`, which works on
   * every backend, is confined to the workspace and bounded (ADR 0046). Kept for compatibility; it behaves as before.
   */
  files?: Record<string, string | Uint8Array>;
  /** Load Pyodide in the background when a sandbox is created (default true), so the first `runCode` is faster. */
  preloadPython?: boolean;
}

/** Settings after validation and defaults. */
export interface ResolvedFakeSettings {
  readonly capabilities: NonNullable<FakeSettings["capabilities"]>;
  readonly handlers: { readonly commands: readonly CommandHandler[]; readonly code: readonly CodeHandler[] };
  readonly workspace: string;
  readonly files: Readonly<Record<string, string | Uint8Array>>;
  readonly preloadPython: boolean;
}

/** Validates settings; a bad field raises `InvalidArgumentError` naming it (for example `settings.capabilities.RECONNECT`). */
export function resolveFakeSettings(settings: unknown): ResolvedFakeSettings {
  if (settings !== undefined && (typeof settings !== "object" || settings === null)) {
    throw new InvalidArgumentError({ field: "settings", backend: "fake", message: "Invalid settings: expected an object." });
  }
  const parsed = validate(fakeSettingsSchema, settings ?? {}, "settings");
  return {
    capabilities: parsed.capabilities ?? {},
    handlers: {
      commands: (parsed.handlers?.commands ?? []) as CommandHandler[],
      code: (parsed.handlers?.code ?? []) as CodeHandler[],
    },
    workspace: parsed.workspace.replace(/\/+$/, ""),
    files: parsed.files,
    preloadPython: parsed.preloadPython,
  };
}

/** True when a handler's `match` accepts the text. */
export function handlerMatches(match: CommandHandler["match"], text: string): boolean {
  if (typeof match === "string") return match === text;
  if (match instanceof RegExp) {
    match.lastIndex = 0;
    return match.test(text);
  }
  return match(text);
}
