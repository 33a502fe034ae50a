import { z } from "zod";

/** The oldest and newest `container` releases this adapter is tested against (1.0.0 through 1.4.x). */
export const SUPPORTED_VERSIONS = { lowest: "1.0.0", below: "1.5.0", text: "1.0.0 through 1.4.x" } as const;

/** What `container --version` says: `container CLI version 1.2.2 (build: release, commit: 0190097)`. */
export interface CliVersion {
  readonly version: string;
  readonly major: number;
  readonly minor: number;
  readonly patch: number;
  readonly build: string;
  readonly commit: string;
}

/** Parses `container --version` (`ReleaseVersion.singleLine`); undefined when the line is not the CLI's. */
export function parseVersionLine(text: string): CliVersion | undefined {
  const match = /^container(?: CLI)? version (\d+)\.(\d+)\.(\d+)\S*(?: \(build: ([a-z]+), commit: ([0-9a-z]+)\))?\s*$/m.exec(text.trim());
  if (!match) return undefined;
  return {
    version: `${match[1]}.${match[2]}.${match[3]}`,
    major: Number(match[1]),
    minor: Number(match[2]),
    patch: Number(match[3]),
    build: match[4] ?? "unknown",
    commit: match[5] ?? "unknown",
  };
}

/** Whether a version is in the tested range (1.0.0 through 1.4.x). */
export function isSupportedVersion(version: CliVersion): boolean {
  return version.major === 1 && version.minor <= 4;
}

const flatStatusSchema = z.looseObject({
  status: z.string(),
  apiServerVersion: z.string().optional(),
  apiServerCommit: z.string().optional(),
  appRoot: z.string().optional(),
});

const nestedStatusSchema = z.looseObject({
  status: z.string(),
  client: z.looseObject({ version: z.string().optional() }).optional(),
  server: z.looseObject({ version: z.string().optional(), commit: z.string().optional() }).optional(),
  paths: z.looseObject({ appRoot: z.string().optional() }).optional(),
});

/** What `container system status --format json` says, whichever shape it came in. */
export interface ServiceStatus {
  /** `running`, `not running`, `unregistered`, or whatever a newer release says. */
  readonly status: string;
  /** The API server's version when it answered, else undefined. */
  readonly serverVersion: string | undefined;
  /** `flat` (1.0–1.3: `apiServerVersion`, `appRoot`), `nested` (1.4.1+: `client`, `server`, `paths`) or `table` (no JSON). */
  readonly shape: "flat" | "nested" | "table";
}

/**
 * Parses `system status --format json`: the flat object of 1.0–1.3 or the nested one of 1.4.1 (apple/container#1769),
 * told apart by its keys, not the version. Undefined when it is neither (not JSON, or no `status`).
 */
export function parseServiceStatus(text: string): ServiceStatus | undefined {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (value !== null && typeof value === "object" && ("client" in value || "server" in value || "paths" in value)) {
    const nested = nestedStatusSchema.safeParse(value);
    if (!nested.success) return undefined;
    return { status: nested.data.status, serverVersion: nested.data.server?.version || undefined, shape: "nested" };
  }
  const flat = flatStatusSchema.safeParse(value);
  if (!flat.success) return undefined;
  return { status: flat.data.status, serverVersion: flat.data.apiServerVersion || undefined, shape: "flat" };
}

/**
 * Parses the table form of `system status`, for a release whose `system status` refuses `--format` (one third-party
 * capture says 1.3.1 had none, the 1.2.2 source has it): the `status <value>` row of the 1.3/1.4 table, or the sentence
 * `apiserver is running` / `apiserver is not running[ and not registered with launchd]`.
 */
export function parseServiceStatusTable(text: string): ServiceStatus | undefined {
  const row = /^status\s+(.+?)\s*$/m.exec(text);
  if (row) return { status: row[1]!, serverVersion: /^(?:server|apiserver)\.version\s+(\S+)/m.exec(text)?.[1], shape: "table" };
  if (/apiserver is not running and not registered/.test(text)) return { status: "unregistered", serverVersion: undefined, shape: "table" };
  if (/apiserver is not running/.test(text)) return { status: "not running", serverVersion: undefined, shape: "table" };
  if (/apiserver is running/.test(text)) return { status: "running", serverVersion: undefined, shape: "table" };
  return undefined;
}

const mountSchema = z.looseObject({
  type: z.record(z.string(), z.unknown()),
  source: z.string(),
  destination: z.string(),
  options: z.array(z.string()).default([]),
});

const configurationSchema = z.looseObject({
  id: z.string(),
  labels: z.record(z.string(), z.string()).default({}),
  mounts: z.array(mountSchema).default([]),
  networks: z.array(z.looseObject({ network: z.string() })).default([]),
  resources: z.looseObject({ cpus: z.number(), memoryInBytes: z.number() }).optional(),
  image: z.looseObject({ reference: z.string() }).optional(),
  readOnly: z.boolean().optional(),
  initProcess: z.looseObject({ executable: z.string().optional(), arguments: z.array(z.string()).optional() }).optional(),
});

/** The 1.x `ManagedContainer`: `{id, configuration, status: {state, networks}}`. */
const containerSchema = z.looseObject({
  id: z.string().optional(),
  configuration: configurationSchema,
  status: z.union([z.looseObject({ state: z.string(), networks: z.array(z.unknown()).default([]) }), z.string()]),
  networks: z.array(z.unknown()).optional(),
});

/** One container as the adapter needs it, from `inspect` or `ls --format json`. */
export interface ContainerRecord {
  readonly id: string;
  /** `running`, `stopped`, `stopping` or `unknown`. There is no exit code: the CLI reports none for a stopped container. */
  readonly state: string;
  /** Network attachments while running (empty for `--network none`, and for every stopped container). */
  readonly attachedNetworks: number;
  /** Networks the configuration asked for (empty for `--network none`). */
  readonly configuredNetworks: readonly string[];
  readonly labels: Readonly<Record<string, string>>;
  readonly mounts: ReadonlyArray<{ type: string; source: string; destination: string; options: readonly string[] }>;
  readonly cpus: number | undefined;
  readonly memoryInBytes: number | undefined;
  readonly image: string | undefined;
}

function toRecord(entry: z.infer<typeof containerSchema>): ContainerRecord {
  const configuration = entry.configuration;
  // 0.x put the state as a string at the top level, with networks beside it (reference §4.3).
  const state = typeof entry.status === "string" ? entry.status : entry.status.state;
  const attached = typeof entry.status === "string" ? (entry.networks ?? []) : entry.status.networks;
  return {
    id: entry.id ?? configuration.id,
    state,
    attachedNetworks: attached.length,
    configuredNetworks: configuration.networks.map((network) => network.network),
    labels: configuration.labels,
    mounts: configuration.mounts.map((mount) => ({
      type: Object.keys(mount.type)[0] ?? "unknown",
      source: mount.source,
      destination: mount.destination,
      options: mount.options,
    })),
    cpus: configuration.resources?.cpus,
    memoryInBytes: configuration.resources?.memoryInBytes,
    image: configuration.image?.reference,
  };
}

/**
 * Parses the JSON array `inspect` (pretty) and `ls --format json` (compact) print, in every shape of 1.0–1.4 (keys
 * added by later releases are ignored; `\/` escapes are ordinary JSON). Undefined when it is not such an array.
 */
export function parseContainers(text: string): ContainerRecord[] | undefined {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  const parsed = z.array(containerSchema).safeParse(value);
  return parsed.success ? parsed.data.map(toRecord) : undefined;
}
