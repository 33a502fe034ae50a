import { defineCapabilities } from "@sbx/core/adapter";

/**
 * What the Modal adapter declares. The one manifest of this backend: core's table of first-party backends is generated from it (scripts/generate-first-party-backends.mjs; a contract test checks, ADR 0040).
 * - EGRESS_ALLOWLIST: Modal's `outboundCidrAllowlist` and `outboundDomainAllowlist` (with `*.suffix`), enforced by Modal.
 * - RESOURCE_LIMITS: CPU and memory as hard limits (`cpuLimit`, `memoryLimitMiB`); a pids limit is refused.
 * - BACKGROUND_COMMANDS, STDIN: `sandbox.exec` with streamed output and a stdin stream.
 * - RECONNECT: `sandboxes.fromId`.
 * - PTY: `exec` with `pty: true`, fixed at 80×24: another size and resize are refused (ADR 0054).
 * - HOST_MOUNTS off: a Modal sandbox runs on Modal's machines and cannot see host folders.
 * - STATEFUL_CODE, RICH_RESULTS: the sbx sandbox agent (the image's python3), which core starts through one `exec`
 *   kept open and speaks to over its stdin and stdout (the driver's `codeAgent`, ADR 0061).
 * - FILE_WATCH: inotify inside the sandbox, through the agent (ADR 0049, ADR 0061).
 * - PORTS: each connection to core's loopback listener on the host (token checked there) carried over the agent's
 *   exec to the sandbox's own loopback, raw TCP under credit; no Modal tunnel is opened (ADR 0053, ADR 0061).
 * - LIST_SANDBOXES: Modal's tag filter over sbx's app (`SandboxListV2`, what `sandboxes.list({ appId, tags })` sends).
 * - NAMED_SANDBOXES: a sandbox name unique among the app's running sandboxes, enforced by Modal (ALREADY_EXISTS on a
 *   second create), attached with `sandboxes.fromName` after checking the policy recorded in its `sbx.policy` tag.
 * - SNAPSHOTS: `snapshotFilesystem()` (files only) named `sbx-snapshot:<image id>`, listed by that prefix, deleted
 *   with `ImageDelete` (ADR 0062).
 * - languages: python (through the agent; the image needs python3).
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
  STATEFUL_CODE: true,
  RICH_RESULTS: true,
  FILE_WATCH: true,
  PORTS: true,
  SNAPSHOTS: true,
  languages: ["python"],
});
