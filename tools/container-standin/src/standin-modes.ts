/**
 * The stand-in's switches, all read from its environment so a test (or the adapter's `settings.environment`) picks the
 * behaviour per call. Every default is the behaviour of the real `container` 1.2.2.
 */
export interface StandinModes {
  /** `CONTAINER_STANDIN_VERSION`: the version `--version` reports. Default `1.2.2`. 1.4.x selects the 1.4 JSON generation. */
  readonly version: string;
  /** The JSON generation that version implies: `"1.0"` (1.0–1.3: flat `system status`, `\/` escaped) or `"1.4"` (nested, unescaped). */
  readonly generation: "1.0" | "1.4";
  /** `CONTAINER_STANDIN_SERVICE`: `running` (default), `not-running` or `unregistered` (the API server is down). */
  readonly service: "running" | "not-running" | "unregistered";
  /** `CONTAINER_STANDIN_SIGNALS`: `unforwarded` (default: 1.0–1.4.1, #1747) or `forwarded` (the unmerged fix). */
  readonly signals: "unforwarded" | "forwarded";
  /** `CONTAINER_STANDIN_CP`: `copy` (default) or `silent` (#2258: the upload exits 0 without copying). */
  readonly copy: "copy" | "silent";
  /** `CONTAINER_STANDIN_NAMESPACE`: which stand-in containers this call sees (one Docker label value). Default `default`. */
  readonly namespace: string;
  /** `CONTAINER_STANDIN_DEFAULT_NETWORK`: the Docker network standing in for the builtin NAT network `default`. Default `bridge`. */
  readonly defaultNetwork: string;
  /** `CONTAINER_STANDIN_DOCKER`: the docker CLI. Default `docker`. */
  readonly docker: string;
}

const COMMITS: Record<string, string> = { "1.4.1": "9a8917c", "1.3.1": "5c3e1b2", "1.2.2": "0190097" };

/** Reads the modes from an environment. */
export function readModes(environment: NodeJS.ProcessEnv = process.env): StandinModes {
  const version = environment.CONTAINER_STANDIN_VERSION ?? "1.2.2";
  const [major, minor] = version.split(".").map(Number);
  const service = environment.CONTAINER_STANDIN_SERVICE;
  return {
    version,
    generation: (major ?? 0) > 1 || ((major ?? 0) === 1 && (minor ?? 0) >= 4) ? "1.4" : "1.0",
    service: service === "not-running" || service === "unregistered" ? service : "running",
    signals: environment.CONTAINER_STANDIN_SIGNALS === "forwarded" ? "forwarded" : "unforwarded",
    copy: environment.CONTAINER_STANDIN_CP === "silent" ? "silent" : "copy",
    namespace: environment.CONTAINER_STANDIN_NAMESPACE || "default",
    defaultNetwork: environment.CONTAINER_STANDIN_DEFAULT_NETWORK || "bridge",
    docker: environment.CONTAINER_STANDIN_DOCKER || "docker",
  };
}

/** The seven-character commit `--version` prints for a version. */
export function commitOf(version: string): string {
  return COMMITS[version] ?? "abcdef0";
}
