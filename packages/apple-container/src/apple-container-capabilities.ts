import { defineCapabilities } from "@sbx/core/adapter";

/**
 * What the Apple `container` adapter declares. The one manifest of this backend: core's table of first-party backends
 * is generated from it (scripts/generate-first-party-backends.mjs, ADR 0040).
 * - STATEFUL_CODE, RICH_RESULTS: the sbx sandbox agent, which core runs in one long-lived `container exec -i`
 *   (`codeAgent` with the backend's enforcement, adr/0052).
 * - BACKGROUND_COMMANDS, STDIN: through the agent (or one `container exec -i` per command when it cannot run); each
 *   command tagged, a verified kill by audit tag, else the VM is deleted.
 * - PTY, FILE_WATCH: through the agent (a pseudo-terminal and inotify inside the VM), terminals held to the same
 *   tag and verified kill as commands (ADR 0049, adr/0052).
 * - PORTS: each connection to a loopback listener on the host carried into the VM over the agent (its `connect`
 *   operation to 127.0.0.1 inside), the token checked on the host; the VM keeps `--network none` (ADR 0053).
 * - HOST_MOUNTS: virtiofs shares (`--mount type=bind`), read-only enforced by the hypervisor.
 * - RESOURCE_LIMITS: memory (at least 200 MiB) and whole CPUs; a pids limit is refused (the CLI has none).
 * - EGRESS_ALLOWLIST off: the CLI has only `--network none` (no NIC) and NAT; no transport for sbx's proxy is verified.
 * - RECONNECT off: not implemented yet.
 * - languages: python (the agent needs python3 in the image).
 */
export const APPLE_CONTAINER_CAPABILITIES = defineCapabilities({
  STATEFUL_CODE: true,
  RICH_RESULTS: true,
  BACKGROUND_COMMANDS: true,
  STDIN: true,
  PTY: true,
  FILE_WATCH: true,
  PORTS: true,
  HOST_MOUNTS: true,
  RESOURCE_LIMITS: true,
  languages: ["python"],
});
