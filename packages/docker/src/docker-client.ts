import Docker from "dockerode";
import type { EngineEndpoint } from "./docker-settings.js";

/** Makes a dockerode client for an endpoint. */
export function createDockerClient(endpoint: EngineEndpoint): Docker {
  return endpoint.kind === "socket"
    ? new Docker({ socketPath: endpoint.socketPath })
    : new Docker({ host: endpoint.host, port: endpoint.port, protocol: "http" });
}
