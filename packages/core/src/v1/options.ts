import type { SandboxLogger } from "./logging.js";
import { z } from "zod";
import type { CredentialSource } from "./credentials.js";
import type { FileWatchOptions, PortExposeOptions, RunCodeOptions, RunCommandOptions, TerminalOptions } from "./sandbox.js";
import type { MatchesSchema, SchemaMatches } from "./schema-match.js";
import { initialFilesSchema, type InitialFile } from "./initial-files.js";
import { snapshotIdSchema } from "./snapshots.js";

/** Egress policy. Default `{ egress: "deny" }`: no network unless the caller asks. */
export const networkPolicySchema = z
  .object({
    /** `"deny"` (default) blocks all outbound traffic; `"allow"` permits it. */
    egress: z.enum(["deny", "allow"]).default("deny"),
    /**
     * With `egress: "deny"`, hosts that remain reachable: host names (`"pypi.org"`), wildcard subdomains
     * (`"*.pythonhosted.org"`), IP addresses or CIDR ranges. Needs the `EGRESS_ALLOWLIST` capability.
     */
    allow: z.array(z.string().min(1).max(253)).optional(),
  })
  .strict()
  .superRefine((policy, context) => {
    if (policy.egress === "allow" && policy.allow && policy.allow.length > 0) {
      context.addIssue({ code: "custom", path: ["allow"], message: 'an allowlist only makes sense with egress "deny"' });
    }
  });

/** Resource limits. Needs the `RESOURCE_LIMITS` capability; refused, never ignored, where it is off. */
export const limitsSchema = z
  .object({
    /** CPU cores, fractional allowed (for example 0.5). */
    cpus: z.number().positive().max(1024).optional(),
    /** Memory in MiB, with no extra swap. */
    memoryMiB: z
      .number()
      .int()
      .min(6)
      .max(1024 * 1024)
      .optional(),
    /** Maximum number of processes. */
    pids: z.number().int().min(8).max(1_000_000).optional(),
  })
  .strict();

/** A host folder made visible in the sandbox. Needs the `HOST_MOUNTS` capability. */
export const mountSchema = z
  .object({
    /** Absolute path on the host. */
    hostPath: z
      .string()
      .min(1)
      .refine((value) => value.startsWith("/"), "must be an absolute host path"),
    /** Absolute path inside the sandbox. */
    sandboxPath: z
      .string()
      .min(1)
      .refine((value) => value.startsWith("/") && !value.split("/").includes(".."), "must be an absolute sandbox path without '..'"),
    /** Mount read-only. Default false. */
    readOnly: z.boolean().default(false),
  })
  .strict();

const callbackSchema = z.custom<(text: string) => void>((value) => value === undefined || typeof value === "function", "must be a function");
const signalSchema = z.custom<AbortSignal>((value) => value === undefined || value instanceof AbortSignal, "must be an AbortSignal");

const environmentName = z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, "must be a valid environment variable name");
const environmentSchema = z.record(environmentName, z.string());

/** Defaults for every command of one sandbox (see `CreateSandboxOptions.commands`). */
export const commandDefaultsSchema = z
  .object({
    /** Time limit of a command given without `timeoutMs`, in milliseconds. Default: none (the sandbox lifetime). */
    defaultTimeoutMs: z
      .number()
      .int()
      .positive()
      .max(7 * 24 * 3600 * 1000)
      .optional(),
  })
  .strict();

/** Defaults for every command of one sandbox. */
export type CommandDefaults = z.output<typeof commandDefaultsSchema>;

/** Options for `createSandbox()`, validated before any backend is touched. */
export const createSandboxOptionsSchema = z
  .object({
    network: networkPolicySchema.default({ egress: "deny" }),
    timeoutMs: z
      .number()
      .int()
      .min(1_000)
      .max(7 * 24 * 3600 * 1000)
      .default(600_000),
    env: environmentSchema.default({}),
    secrets: environmentSchema.default({}),
    limits: limitsSchema.optional(),
    // Optional in the resolved options too (adapters and tests build them by hand); core applies the default, 256.
    maxLiveProcesses: z.number().int().min(1).max(100_000).optional(),
    commands: commandDefaultsSchema.optional(),
    metadata: z.record(z.string().min(1).max(63), z.string().max(256)).default({}),
    mounts: z.array(mountSchema).default([]),
    files: initialFilesSchema.optional(),
    fromSnapshot: snapshotIdSchema.optional(),
    user: z.enum(["default", "root"]).default("default"),
    allowFake: z.boolean().default(false),
    settings: z.record(z.string(), z.unknown()).default({}),
    backends: z.array(z.string()).min(1).optional(),
    logger: z.custom<SandboxLogger>((value) => value === undefined || typeof value === "function", "must be a function (entry) => void").optional(),
    signal: signalSchema.optional(),
  })
  .strict();

/** Egress policy as the caller writes it. */
export type NetworkPolicyInput = z.input<typeof networkPolicySchema>;
/** Egress policy after defaults. */
export type NetworkPolicy = z.output<typeof networkPolicySchema>;
/** Resource limits. */
export type ResourceLimits = z.output<typeof limitsSchema>;
/** A host mount. */
export type MountInput = z.input<typeof mountSchema>;
/** A host mount after defaults. */
export type Mount = z.output<typeof mountSchema>;

/** Options for `createSandbox()`. Every field is optional. */
export interface CreateSandboxOptions {
  /** Egress policy. Default `{ egress: "deny" }`. */
  network?: NetworkPolicyInput;
  /** Sandbox lifetime in milliseconds; the sandbox ends by itself after it, even if this process dies. Default 600000 (10 minutes). */
  timeoutMs?: number;
  /** Environment variables for every command and code run. Recorded by name in the audit record. */
  env?: Record<string, string>;
  /**
   * Like `env`, but the values never appear in the audit record, error messages or logs. A value made by
   * `credential()` is a scoped credential: issued for this sandbox once it exists and revoked when it ends.
   */
  secrets?: Record<string, string | CredentialSource>;
  /** Resource limits (needs `RESOURCE_LIMITS`). Default: the backend's own defaults, recorded in the audit record. */
  limits?: ResourceLimits;
  /**
   * Most commands (`commands.run` and `commands.start`) running at once in this sandbox; one more is refused with
   * `TooManyProcessesError`. Default 256. Why: every live command holds host resources (a stream, descriptors,
   * timers), so a sandbox that starts commands without end must not exhaust the host. Recorded in the audit record
   * (`policies.processes`). Every backend, enforced by core (adr/0030).
   */
  maxLiveProcesses?: number;
  /**
   * Defaults for this sandbox's commands. `defaultTimeoutMs`: the time limit of a `commands.run()` or
   * `commands.start()` given without `timeoutMs`; past it the command is killed (verified like every timeout) and the
   * call rejects with `TimeoutError` (`SBX_TIMEOUT`). Default: no limit beyond the sandbox lifetime. Why: an agent's
   * command that never ends (a prompt waiting for input, a server started in the foreground) must not hold the caller
   * until the lifetime ends; a framework sets one limit here instead of on every call. Every backend, enforced by core
   * (ADR 0045).
   */
  commands?: CommandDefaults;
  /** Labels attached to the sandbox (backend permitting), for listing and sweeping. */
  metadata?: Record<string, string>;
  /** Host folders to mount (needs `HOST_MOUNTS`). A git worktree is the typical case. */
  mounts?: MountInput[];
  /**
   * Files to write into the sandbox before `createSandbox` resolves, for example `[{ path: "main.py", content: "…" }]`.
   * Core writes them through the backend's own file channel, confined like every `files.write` (a path out of the
   * workspace is `PathError`), creating parent folders. At most 1000 files and 64 MiB in all (`InvalidArgumentError`
   * before the backend is touched). If one write fails, the sandbox is destroyed and `createSandbox` rejects with that
   * write's error: nothing is left running. Default: none. Every backend; not with `connectSandbox` (ADR 0046).
   */
  files?: InitialFile[];
  /**
   * A snapshot id (`sandbox.snapshot()`, `listSnapshots()`): the new sandbox starts with the snapshot's files. Only
   * files: every policy (network, limits, user, lifetime, mounts), the environment, secrets and labels are this
   * create's own, applied afresh as for any create; nothing is inherited from the sandbox the snapshot was taken of.
   * Needs `SNAPSHOTS` (refused with `CapabilityNotSupportedError` elsewhere). Default: none (ADR 0056).
   */
  fromSnapshot?: string;
  /** `"default"`: the backend's unprivileged user. `"root"`: root inside the sandbox, recorded in the audit record. */
  user?: "default" | "root";
  /** With target `"auto"`: allow falling back to the in-process fake when no isolating backend is usable. Default false. */
  allowFake?: boolean;
  /** Backend-specific settings, passed to the adapter (for example `{ runtime: "runsc" }` for Docker). */
  settings?: Record<string, unknown>;
  /**
   * With target `"auto"`: the backends to try, in order of preference, for example `["docker", "e2b"]`. Only these
   * are tried. Default: the `SBX_BACKENDS` environment variable (`SBX_BACKENDS=docker,e2b`), else docker, e2b, modal
   * and then every isolating backend registered with `registerProvider`. Ignored for other targets.
   */
  backends?: string[];
  /**
   * Receives one entry per backend call (operation, duration, outcome), secrets redacted, for debugging. Default:
   * none, or a logger writing to stderr when the environment variable `SBX_DEBUG=1` is set.
   */
  logger?: SandboxLogger;
  /** Aborts creation. */
  signal?: AbortSignal;
}

/** The documented `CreateSandboxOptions` and its schema name the same fields, and what the schema outputs is one. */
// eslint-disable-next-line @typescript-eslint/no-unused-vars -- a compile-time check: the alias fails to type-check when schema and type drift
type CreateSandboxOptionsMatch = MatchesSchema<SchemaMatches<typeof createSandboxOptionsSchema, CreateSandboxOptions>>;

/**
 * `CreateSandboxOptions` after validation and defaults: what adapters receive (without the caller-side `signal`,
 * `backends` and `logger`, and without `files`, which core writes itself through the driver once the sandbox exists).
 */
export type ResolvedCreateOptions = Omit<z.output<typeof createSandboxOptionsSchema>, "signal" | "backends" | "logger" | "files">;

/** Options for `commands.run()` and `commands.start()`. */
export const runCommandOptionsSchema = z
  .object({
    cwd: z.string().min(1).optional(),
    env: environmentSchema.optional(),
    stdin: z.union([z.string(), z.instanceof(Uint8Array), z.literal(true)]).optional(),
    timeoutMs: z.number().int().positive().optional(),
    outputLimitBytes: z.number().int().positive().optional(),
    combinedOutput: z.boolean().optional(),
    onStdout: callbackSchema.optional(),
    onStderr: callbackSchema.optional(),
    onOutput: callbackSchema.optional(),
    signal: signalSchema.optional(),
  })
  .strict();

/** Options for `files.watch()` (documented on `FileWatchOptions`). */
export const fileWatchOptionsSchema = z
  .object({
    recursive: z.boolean().optional(),
    signal: signalSchema.optional(),
    maxBufferedEvents: z.number().int().positive().optional(),
    timeoutMs: z.number().int().positive().optional(),
  })
  .strict();

/** Options for `terminals.create()` (documented on `TerminalOptions`). */
export const terminalOptionsSchema = z
  .object({
    command: z.string().min(1).optional(),
    cols: z.number().int().min(1).max(10_000).optional(),
    rows: z.number().int().min(1).max(10_000).optional(),
    cwd: z.string().min(1).optional(),
    env: environmentSchema.optional(),
    timeoutMs: z.number().int().positive().optional(),
    onData: z.custom<(data: Uint8Array) => void>((value) => typeof value === "function", "must be a function"),
    signal: signalSchema.optional(),
  })
  .strict();

/** Options for `ports.expose()` (documented on `PortExposeOptions`). */
export const portExposeOptionsSchema = z
  .object({
    token: z
      .union([
        z
          .string()
          .min(16)
          .max(256)
          .regex(/^[A-Za-z0-9._~-]+$/, "must be 16-256 characters from A-Z a-z 0-9 - _ . ~"),
        z.literal(false),
      ])
      .optional(),
    maxConnections: z.number().int().min(1).max(1024).optional(),
    signal: signalSchema.optional(),
  })
  .strict();

/** A terminal's size (`Terminal.resize`). */
export const terminalSizeSchema = z.object({ cols: z.number().int().min(1).max(10_000), rows: z.number().int().min(1).max(10_000) }).strict();

/** Options for `runCode()`. */
export const runCodeOptionsSchema = z
  .object({
    language: z.string().min(1).optional(),
    contextId: z.string().min(1).optional(),
    timeoutMs: z.number().int().positive().optional(),
    outputLimitBytes: z.number().int().positive().optional(),
    maxResults: z.number().int().nonnegative().optional(),
    onStdout: callbackSchema.optional(),
    onStderr: callbackSchema.optional(),
    signal: signalSchema.optional(),
  })
  .strict();

/** `RunCommandOptions` (documented in sandbox.ts) and its schema describe the same fields: no cast bridges them. */
// eslint-disable-next-line @typescript-eslint/no-unused-vars -- a compile-time check: the alias fails to type-check when schema and type drift
type RunCommandOptionsMatch = MatchesSchema<SchemaMatches<typeof runCommandOptionsSchema, RunCommandOptions>>;
/** `RunCodeOptions` (documented in sandbox.ts) and its schema describe the same fields. */
// eslint-disable-next-line @typescript-eslint/no-unused-vars -- a compile-time check: the alias fails to type-check when schema and type drift
type RunCodeOptionsMatch = MatchesSchema<SchemaMatches<typeof runCodeOptionsSchema, RunCodeOptions>>;
/** `FileWatchOptions` (documented in sandbox.ts) and its schema describe the same fields. */
// eslint-disable-next-line @typescript-eslint/no-unused-vars -- a compile-time check: the alias fails to type-check when schema and type drift
type FileWatchOptionsMatch = MatchesSchema<SchemaMatches<typeof fileWatchOptionsSchema, FileWatchOptions>>;
/** `TerminalOptions` (documented in sandbox.ts) and its schema describe the same fields. */
// eslint-disable-next-line @typescript-eslint/no-unused-vars -- a compile-time check: the alias fails to type-check when schema and type drift
type TerminalOptionsMatch = MatchesSchema<SchemaMatches<typeof terminalOptionsSchema, TerminalOptions>>;
/** `PortExposeOptions` (documented in sandbox.ts) and its schema describe the same fields. */
// eslint-disable-next-line @typescript-eslint/no-unused-vars -- a compile-time check: the alias fails to type-check when schema and type drift
type PortExposeOptionsMatch = MatchesSchema<SchemaMatches<typeof portExposeOptionsSchema, PortExposeOptions>>;
