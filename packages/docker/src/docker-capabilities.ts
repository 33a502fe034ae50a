import { defineCapabilities } from "@sbx/core";

/**
 * What the Docker adapter declares. Must equal core's copy in `backend-registry.ts` (a contract test checks).
 * - STATEFUL_CODE, RICH_RESULTS: the sbx sandbox agent, started in the container with one long-lived exec.
 * - EGRESS_ALLOWLIST: sbx's host-side allowlist proxy (adr/0021).
 * - BACKGROUND_COMMANDS, STDIN, RECONNECT: execs, and `connect` to a labelled container.
 * - HOST_MOUNTS, RESOURCE_LIMITS: bind mounts and cgroup limits, read back after create.
 * - LIST_SANDBOXES, NAMED_SANDBOXES: label filters on the engine's container list, and its unique container names (ADR 0050).
 * - SET_LIFETIME: the root deadline timer replaced from outside by an exec as its own uid (ADR 0050).
 * - FILE_WATCH: inotify inside the container, through the sbx sandbox agent (adr/0049).
 * - PTY: a pseudo-terminal the agent allocates inside, its processes tagged and killed like commands (adr/0049).
 * - PAUSE: every process of the sandbox user stopped (SIGSTOP) and verified stopped from the deadline's uid; the root
 *   deadline and the dead-man's switch keep running (ADR 0055).
 * - PORTS: each connection to a loopback listener on the host carried into the container over the agent, the container
 *   keeping no network (adr/0053).
 * - SNAPSHOTS: the workspace archived from inside and committed onto the base image through a clean build container (ADR 0056).
 * - languages: python.
 */
export const DOCKER_CAPABILITIES = defineCapabilities({
  STATEFUL_CODE: true,
  RICH_RESULTS: true,
  EGRESS_ALLOWLIST: true,
  BACKGROUND_COMMANDS: true,
  STDIN: true,
  HOST_MOUNTS: true,
  RECONNECT: true,
  RESOURCE_LIMITS: true,
  LIST_SANDBOXES: true,
  NAMED_SANDBOXES: true,
  SET_LIFETIME: true,
  FILE_WATCH: true,
  PTY: true,
  PAUSE: true,
  PORTS: true,
  SNAPSHOTS: true,
  languages: ["python"],
});
