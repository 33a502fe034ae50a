import { defineCapabilities } from "@sbx/core/adapter";

/**
 * What the E2B adapter declares. The one manifest of this backend: core's table of first-party backends is generated from it (scripts/generate-first-party-backends.mjs; a contract test checks, ADR 0040).
 * - STATEFUL_CODE, RICH_RESULTS: the code interpreter's contexts and MIME results.
 * - EGRESS_ALLOWLIST: E2B's own `allowOut`/`denyOut` egress rules.
 * - BACKGROUND_COMMANDS, STDIN, RECONNECT: envd's process API and `Sandbox.connect`.
 * - PTY: envd's process API in PTY mode, as the SDK's `pty` uses it (ADR 0054).
 * - FILE_WATCH: envd's `WatchDir` (the SDK's `watchDir`); a rename is a remove and a create (ADR 0054).
 * - PORTS: a loopback listener on the host carrying each connection over the sbx agent's `connect`, the agent run as one
 *   envd process with stdin open (ADR 0053, ADR 0060); not E2B's `getHost`, which is a public HTTP edge address.
 * - HOST_MOUNTS off: an E2B sandbox runs on E2B's machines and cannot see host folders.
 * - RESOURCE_LIMITS off: CPU and memory are fixed when the template is built, not per sandbox.
 * - LIST_SANDBOXES: E2B's `Sandbox.list` with its metadata filter (sbx's sandboxes carry a marker key).
 * - SET_LIFETIME: E2B's `setTimeout`, enforced by E2B's control plane; the end applied is read back with `getInfo`.
 * - NAMED_SANDBOXES off: E2B has no sandbox names, so no uniqueness a get-or-create could rest on.
 * - languages: python only; other kernels exist only on some real E2B templates and are not verified here.
 */
export const E2B_CAPABILITIES = defineCapabilities({
  STATEFUL_CODE: true,
  RICH_RESULTS: true,
  EGRESS_ALLOWLIST: true,
  BACKGROUND_COMMANDS: true,
  STDIN: true,
  RECONNECT: true,
  LIST_SANDBOXES: true,
  SET_LIFETIME: true,
  PTY: true,
  FILE_WATCH: true,
  PORTS: true,
  languages: ["python"],
});
