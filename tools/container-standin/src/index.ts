import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { LABEL_NAMESPACE } from "./docker-cli.js";

/**
 * The stand-in `container` executable (test infrastructure): Apple's `container` CLI reproduced over the local Docker
 * Engine, for the sbx adapter's contract suite. See README.md for what it reproduces and what it cannot.
 */
export const CONTAINER_STANDIN_BINARY = fileURLToPath(new URL("../bin/container", import.meta.url));

export { readModes, type StandinModes } from "./standin-modes.js";
export { swiftJson } from "./swift-json.js";
export { parseMemory } from "./container-configuration.js";

const run = promisify(execFile);

/** Removes every Docker container of one stand-in namespace (a test's cleanup: only what it made). */
export async function removeStandinNamespace(namespace: string, dockerBinary = "docker"): Promise<void> {
  const { stdout } = await run(dockerBinary, ["ps", "-aq", "--filter", `label=${LABEL_NAMESPACE}=${namespace}`]);
  const ids = stdout.split("\n").filter(Boolean);
  if (ids.length > 0) await run(dockerBinary, ["rm", "-f", ...ids]).catch(() => undefined);
}
