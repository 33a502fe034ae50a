import { InvalidArgumentError } from "@sbx/core";
import { isIP } from "node:net";
import { z } from "zod";
import type { EgressDenial } from "./egress/egress-proxy.js";

/** One pull progress event, as the engine reports it (one JSON line of the pull stream). */
export interface PullProgressEvent {
  /** The image being pulled. */
  readonly image: string;
  /** Engine status text, for example `"Downloading"` or `"Pull complete"`. */
  readonly status: string;
  /** Layer id, when the event is about one layer. */
  readonly id?: string;
  /** Bytes done and total for the layer, when the engine reports them. */
  readonly progressDetail?: { readonly current?: number; readonly total?: number };
}

const functionSchema = <Signature>(message: string) => z.custom<Signature>((value) => value === undefined || typeof value === "function", message);

/** Settings of the Docker provider, validated with zod. Every field is optional. */
export const dockerSettingsSchema = z
  .object({
    /** Unix socket of the engine. Default: from `DOCKER_HOST` (`unix://…`), else `/var/run/docker.sock`. */
    socketPath: z.string().min(1).optional(),
    /** Engine address in `DOCKER_HOST` form (`unix:///path` or `tcp://host:port`). Default: `DOCKER_HOST`. */
    host: z
      .string()
      .regex(/^(unix|tcp|http):\/\//, "must look like unix:///var/run/docker.sock or tcp://127.0.0.1:2375")
      .optional(),
    /** Image used when the target after `docker://` is empty. Default `"python:3.12-slim"`. */
    image: z.string().min(1).default("python:3.12-slim"),
    /** OCI runtime, for example `"runsc"` (gVisor). Default: the engine's default runtime. */
    runtime: z.string().min(1).optional(),
    /** Docker network for sandboxes created with `network: { egress: "allow" }`. Default `"bridge"`. */
    bridgeNetwork: z.string().min(1).default("bridge"),
    /** The unprivileged `uid:gid` commands run as unless `user: "root"`. Default `"10001:10001"`. */
    user: z
      .string()
      .regex(/^\d+:\d+$/, "must be numeric uid:gid, for example 10001:10001")
      .default("10001:10001"),
    /** Workspace path inside the container. Default `"/workspace"`. */
    workspace: z
      .string()
      .regex(/^\/[^\0]*[^/]$/, "must be an absolute path without a trailing slash")
      .default("/workspace"),
    /**
     * Size of the tmpfs-backed workspace volume in MiB. Its pages count against the memory limit, so it must fit in
     * it: `workspaceSizeMiB + tmpSizeMiB` may be at most the memory limit minus 64 MiB of headroom for processes
     * (else `InvalidArgumentError`), so filling the workspace gives ENOSPC, not the OOM killer. Default: half of what
     * the memory limit leaves after /tmp (224 MiB with the default 512 MiB limit).
     */
    workspaceSizeMiB: z
      .number()
      .int()
      .min(1)
      .max(1024 * 1024)
      .optional(),
    /** Size of the tmpfs at /tmp in MiB. Default 64. */
    tmpSizeMiB: z
      .number()
      .int()
      .min(1)
      .max(1024 * 1024)
      .default(64),
    /** Default limits when the caller gives none: 1 CPU, 512 MiB (no swap), 256 processes. */
    defaultLimits: z
      .object({
        cpus: z.number().positive().max(1024).default(1),
        memoryMiB: z.number().int().min(6).default(512),
        pids: z.number().int().min(8).default(256),
      })
      .strict()
      .default({ cpus: 1, memoryMiB: 512, pids: 256 }),
    /** Called with each progress event while the engine pulls a missing image (host-side, outside the sandbox). */
    onPullProgress: functionSchema<(event: PullProgressEvent) => void>("must be a function").optional(),
    /** Pull missing images. Default true; false raises instead. */
    pull: z.boolean().default(true),
    /**
     * Keep the sandbox running after the process that created it exits, until its lifetime ends (for `connect` from
     * another process). Default false: the creating process holds a dead-man's switch (an attach to the container's
     * stdin) and the sandbox ends within seconds when that process dies, SIGKILL included. Recorded in the audit.
     */
    keepAfterHostExit: z.boolean().default(false),
    /**
     * Ports an allowlist entry without its own `:port` allows (`network.allow`). Default `[80, 443]`; an entry such as
     * `"pypi.internal:8080"` allows only that port.
     */
    egressPorts: z.array(z.number().int().min(1).max(65535)).min(1).default([80, 443]),
    /**
     * Names the allowlist proxy resolves to fixed addresses instead of asking DNS (an `/etc/hosts` for egress), for
     * example a package mirror on a private address. Used as given, with no check of the address (the caller named it:
     * it counts as an explicit entry). Default none.
     */
    egressHosts: z
      .record(
        z.string().min(1),
        z.string().refine((value) => isIP(value) !== 0, "must be an IP address"),
      )
      .default({}),
    /**
     * How the allowlist proxy resolves a name `egressHosts` does not map: called with the name, returns its addresses
     * (for example a resolver of your own, or a test's). Default: the host's resolver (`dns.lookup`). Unlike
     * `egressHosts`, its answers are checked like DNS answers: addresses in special-purpose ranges and addresses bound
     * on this host's interfaces are refused unless an IP/CIDR entry covers them.
     */
    egressResolver: functionSchema<(host: string) => Promise<readonly string[]>>("must be a function").optional(),
    /**
     * How an allowlisted sandbox's forwarder reaches the host proxy (adr/0027). `"auto"` (default): a Unix socket in a
     * private host directory bind-mounted read-only into the sandbox, when the engine is local and a probe at create
     * reaches it, else the exec stream; `"exec"`: always the forwarder's Docker exec stream (slower, no host
     * directory). The enforcement is the same; the audit record names the transport used.
     */
    egressTransport: z.enum(["auto", "exec"]).default("auto"),
    /** Called on the host for each request the allowlist proxy refuses (also counted in the audit notes). */
    onEgressDenied: functionSchema<(denial: EgressDenial & { sandboxId: string }) => void>("must be a function").optional(),
    /**
     * Commands through the sbx sandbox agent (adr/0025): `"warm"` (default) sends commands through the agent once a code
     * call has started it (a warm `commands.run` costs about a tenth of an exec), and through a plain `docker exec`
     * before that, in images without python3, and whenever the agent is gone; `"start"` makes the first command start
     * the agent (and wait for it, a few hundred ms, once); `"off"` always uses `docker exec`. Kills, output caps, the
     * out-of-memory report and timeouts are the same on both paths.
     */
    agentCommands: z.enum(["warm", "start", "off"]).default("warm"),
    /** Milliseconds to wait for the engine to answer `detect()`. Default 3000. */
    detectTimeoutMs: z.number().int().positive().default(3000),
  })
  .strict();

/** When commands go through the sbx sandbox agent (`settings.agentCommands`). */
export type AgentCommandsMode = "warm" | "start" | "off";

/** Docker provider settings as the caller writes them. */
export type DockerSettings = z.input<typeof dockerSettingsSchema>;
/** Docker provider settings after defaults. */
export type ResolvedDockerSettings = z.output<typeof dockerSettingsSchema>;

/** Validates settings, turning the first issue into an `InvalidArgumentError` naming the field (`settings.<field>`). */
export function parseDockerSettings(settings: unknown): ResolvedDockerSettings {
  return parseSettingsWith(dockerSettingsSchema, settings ?? {});
}

/** Parses with `schema` (the settings schema or a part of it), turning the first issue into an `InvalidArgumentError`. */
function parseSettingsWith<Schema extends z.ZodType>(schema: Schema, settings: unknown): z.output<Schema> {
  const parsed = schema.safeParse(settings);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0]!;
  const path = issue.path.map(String);
  if (issue.code === "unrecognized_keys") path.push(...(issue as { keys: string[] }).keys.slice(0, 1));
  const field = ["settings", ...path].join(".");
  throw new InvalidArgumentError({ field, backend: "docker", message: `Invalid ${field}: ${issue.message}.` });
}

/**
 * The settings one sandbox runs with: the provider's (`provider.resolved`, parsed once when the provider was built from
 * `provider.given`), refined by the sandbox's own `options.settings`. Core passes the caller's settings both to the
 * provider's factory and to `create`, so only the keys whose values differ from what the provider was built with are
 * parsed here: no value is validated twice. Throws `InvalidArgumentError` naming the field, like `parseDockerSettings`.
 */
export function refineDockerSettings(
  provider: { readonly given: Readonly<Record<string, unknown>>; readonly resolved: ResolvedDockerSettings },
  overrides: Readonly<Record<string, unknown>>,
): ResolvedDockerSettings {
  const changed = Object.keys(overrides).filter((key) => !Object.is(overrides[key], provider.given[key]));
  if (changed.length === 0) return provider.resolved;
  const known = changed.filter((key) => key in dockerSettingsSchema.shape);
  // A key the schema does not name is refused by the full schema's strict parse, with its usual message.
  if (known.length < changed.length) return parseDockerSettings({ ...provider.given, ...overrides });
  const mask = Object.fromEntries(known.map((key) => [key, true] as const)) as Partial<Record<keyof ResolvedDockerSettings, true>>;
  const refined = parseSettingsWith(dockerSettingsSchema.pick(mask), Object.fromEntries(known.map((key) => [key, overrides[key]])));
  return { ...provider.resolved, ...refined };
}

/** Where the engine is: a unix socket or a TCP address. */
export type EngineEndpoint =
  { readonly kind: "socket"; readonly socketPath: string } | { readonly kind: "tcp"; readonly host: string; readonly port: number };

/** Resolves the engine endpoint from settings, then `DOCKER_HOST`, then the default socket. */
export function resolveEndpoint(settings: ResolvedDockerSettings, environment: NodeJS.ProcessEnv = process.env): EngineEndpoint {
  if (settings.socketPath) return { kind: "socket", socketPath: settings.socketPath };
  const host = settings.host ?? environment.DOCKER_HOST;
  if (!host) return { kind: "socket", socketPath: "/var/run/docker.sock" };
  if (host.startsWith("unix://")) return { kind: "socket", socketPath: host.slice("unix://".length) || "/var/run/docker.sock" };
  const match = /^(?:tcp|http):\/\/([^:/]+)(?::(\d+))?\/?$/.exec(host);
  if (!match)
    throw new InvalidArgumentError({
      field: settings.host ? "settings.host" : "DOCKER_HOST",
      backend: "docker",
      message: `Invalid DOCKER_HOST ${JSON.stringify(host)}: expected unix:///path/to/docker.sock or tcp://host:port.`,
    });
  return { kind: "tcp", host: match[1]!, port: Number(match[2] ?? 2375) };
}

/** Human-readable endpoint, for messages. */
export function describeEndpoint(endpoint: EngineEndpoint): string {
  return endpoint.kind === "socket" ? `unix://${endpoint.socketPath}` : `tcp://${endpoint.host}:${endpoint.port}`;
}
