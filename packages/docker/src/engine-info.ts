import type Docker from "dockerode";
import { describeEndpoint, type EngineEndpoint } from "./docker-settings.js";

/** What the engine says about itself. */
export interface EngineInfo {
  readonly version: string;
  readonly apiVersion: string;
  readonly securityOptions: readonly string[];
  readonly runtimes: readonly string[];
}

const engineInfoCache = new Map<string, Promise<EngineInfo>>();

/** The engine's version, security options and runtimes, asked once per endpoint (a failed answer is asked again next time). */
export function engineInfoOf(docker: Docker, endpoint: EngineEndpoint): Promise<EngineInfo> {
  const key = describeEndpoint(endpoint);
  let cached = engineInfoCache.get(key);
  if (!cached) {
    cached = Promise.all([docker.version(), docker.info()]).then(([version, info]) => ({
      version: version.Version,
      apiVersion: version.ApiVersion,
      securityOptions: (info.SecurityOptions ?? []) as string[],
      runtimes: Object.keys(info.Runtimes ?? {}),
    }));
    cached.catch(() => engineInfoCache.delete(key));
    engineInfoCache.set(key, cached);
  }
  return cached;
}
