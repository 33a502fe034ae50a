import { defineCapabilities } from "@sbx/core/adapter";

/**
 * What the Modal adapter declares. The one manifest of this backend: core's table of first-party backends is generated from it (scripts/generate-first-party-backends.mjs; a contract test checks, ADR 0040).
 * - EGRESS_ALLOWLIST: Modal's `outboundCidrAllowlist` and `outboundDomainAllowlist` (with `*.suffix`), enforced by Modal.
 * - RESOURCE_LIMITS: CPU and memory as hard limits (`cpuLimit`, `memoryLimitMiB`); a pids limit is refused.
 * - BACKGROUND_COMMANDS, STDIN: `sandbox.exec` with streamed output and a stdin stream.
 * - RECONNECT: `sandboxes.fromId`.
 * - PTY: `exec` with `pty: true`, fixed at 80×24: another size and resize are refused (ADR 0054).
 * - HOST_MOUNTS off: a Modal sandbox runs on Modal's machines and cannot see host folders.
 * - STATEFUL_CODE, RICH_RESULTS off: no code interpreter yet (the sbx sandbox agent has not landed); core refuses
 *   code contexts, and one-shot Python runs through a command with `results: null`.
 * - LIST_SANDBOXES: Modal's tag filter over sbx's app (`SandboxListV2`, what `sandboxes.list({ appId, tags })` sends).
 * - NAMED_SANDBOXES: a sandbox name unique among the app's running sandboxes, enforced by Modal (ALREADY_EXISTS on a
 *   second create), attached with `sandboxes.fromName` after checking the policy recorded in its `sbx.policy` tag.
 * - SNAPSHOTS: `snapshotFilesystem()` (files only) named `sbx-snapshot:<image id>`, listed by that prefix, deleted
 *   with `ImageDelete` (ADR 0062).
 * - languages: python (one-shot, through core's runner over `exec`; the image needs python3).
 */
export const MODAL_CAPABILITIES = defineCapabilities({
  EGRESS_ALLOWLIST: true,
  BACKGROUND_COMMANDS: true,
  STDIN: true,
  RECONNECT: true,
  RESOURCE_LIMITS: true,
  LIST_SANDBOXES: true,
  NAMED_SANDBOXES: true,
  PTY: true,
  SNAPSHOTS: true,
  languages: ["python"],
});
