import { defineCapabilities } from "@sbx/core";

/**
 * What the Modal adapter declares. Must equal core's copy in `backend-registry.ts` (a contract test checks).
 * - EGRESS_ALLOWLIST: Modal's `outboundCidrAllowlist` and `outboundDomainAllowlist` (with `*.suffix`), enforced by Modal.
 * - RESOURCE_LIMITS: CPU and memory as hard limits (`cpuLimit`, `memoryLimitMiB`); a pids limit is refused.
 * - BACKGROUND_COMMANDS, STDIN: `sandbox.exec` with streamed output and a stdin stream.
 * - RECONNECT: `sandboxes.fromId`.
 * - HOST_MOUNTS off: a Modal sandbox runs on Modal's machines and cannot see host folders.
 * - STATEFUL_CODE, RICH_RESULTS off: no code interpreter yet (the sbx sandbox agent has not landed); core refuses
 *   code contexts, and one-shot Python runs through a command with `results: null`.
 * - languages: python (one-shot, through core's runner over `exec`; the image needs python3).
 */
export const MODAL_CAPABILITIES = defineCapabilities({
  EGRESS_ALLOWLIST: true,
  BACKGROUND_COMMANDS: true,
  STDIN: true,
  RECONNECT: true,
  RESOURCE_LIMITS: true,
  languages: ["python"],
});
