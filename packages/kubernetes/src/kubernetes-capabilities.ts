import { defineCapabilities } from "@sbx/core/adapter";

/**
 * What the Kubernetes adapter declares (ADR 0048). The one manifest of this backend: core's table of first-party
 * backends is generated from it (scripts/generate-first-party-backends.mjs).
 * - STATEFUL_CODE, RICH_RESULTS: the sbx agent, which core carries over a `pods/exec` stream (the driver's `codeAgent`).
 * - BACKGROUND_COMMANDS, STDIN: commands through the agent over that stream (stdin closed by the agent, so on v4 too),
 *   or one `pods/exec` each (`agentCommands: "off"`, stdin half-closed with `v5.channel.k8s.io`); killed by process id
 *   with the verified tree kill (ADR 0051).
 * - PTY: a pseudo-terminal the agent allocates in the Pod, its processes killed like a command's (ADR 0051).
 * - FILE_WATCH: inotify in the Pod, through the agent (ADR 0049, ADR 0051).
 * - PORTS: each connection to a loopback listener on the host carried into the Pod over the agent's stream (its
 *   `connect` operation to 127.0.0.1 inside), the token checked on the host; the deny-all NetworkPolicy stays (ADR 0053).
 * - RECONNECT: `connectSandbox("k8s://", id)` finds the Pod by name and label.
 * - LIST_SANDBOXES: the namespace's Pods by label selector, the metadata read back from their annotation (ADR 0058).
 * - NAMED_SANDBOXES: the NetworkPolicy `sbx-<digest of name>` is the claim (the API server's 409 decides the one
 *   creator, policy before Pod kept); the others attach once the Pod runs, its recorded policy matching theirs (ADR 0058).
 * - RESOURCE_LIMITS: CPU and memory as Pod requests equal to limits; a pids limit is refused (Kubernetes has no per-Pod one).
 * - EGRESS_ALLOWLIST off: egress is all or nothing (a deny-all NetworkPolicy, proven enforced at create); an allowlist is refused.
 * - HOST_MOUNTS off: the client's folders are not on the node.
 */
export const KUBERNETES_CAPABILITIES = defineCapabilities({
  STATEFUL_CODE: true,
  RICH_RESULTS: true,
  BACKGROUND_COMMANDS: true,
  STDIN: true,
  RECONNECT: true,
  RESOURCE_LIMITS: true,
  FILE_WATCH: true,
  PTY: true,
  PORTS: true,
  LIST_SANDBOXES: true,
  NAMED_SANDBOXES: true,
  languages: ["python"],
});
