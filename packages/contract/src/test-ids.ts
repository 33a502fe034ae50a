/**
 * Every test id in the contract suite, grouped by feature. Ids are stable: pass one as a key of
 * `options.skip` (with a reason) to skip that test. A test runs only in the branch its capability selects,
 * so an id for the "on" path and its "refused" twin never both run.
 */
export const CONTRACT_TEST_IDS = [
  "manifest.valid-and-stable",

  "lifecycle.create",
  "lifecycle.kill",
  "lifecycle.kill-twice",
  "lifecycle.use-after-kill",
  "lifecycle.await-using-disposes",
  "lifecycle.invalid-create-options",

  "file-policy.symlink-inside",
  "file-policy.symlink-outside",
  "file-policy.read-special",
  "file-policy.list-sorted",
  "file-policy.remove-folder",
  "file-races.hard-names",
  "file-races.non-utf8-names",
  "file-races.read-flip",
  "file-races.write-flip",
  "policy.missing-cwd",
  "policy.default-environment",

  "commands.exit-codes",
  "commands.stdout-stderr-separate",
  "commands.streaming-order",
  "commands.binary-bytes",
  "commands.split-multibyte-streaming",
  "commands.cwd-default",
  "commands.cwd-relative",
  "commands.cwd-absolute",
  "commands.env",
  "commands.no-stdin-is-empty",
  "commands.stdin",
  "commands.stdin-refused",
  "commands.timeout-kills-tree",
  "commands.abort",
  "commands.output-cap",
  "commands.background-child-holds-stdout",
  "commands.invalid-arguments",

  "background.start-wait",
  "background.live-process-limit",
  "background.stdout-iterable",
  "background.kill",
  "background.stdin",
  "background.stdin-refused",
  "background.refused",

  "files.text-round-trip",
  "files.binary-round-trip",
  "files.large-stream-round-trip",
  "files.large-stream-slow-consumer",
  "files.unicode-names",
  "files.list-stat-exists",
  "files.mkdir",
  "files.remove",
  "files.rename",
  "files.missing",
  "files.path-escapes",
  "files.visible-to-commands",
  "files.commands-visible-to-files",
  "files.upload-download",

  "file-watch.events-in-order",
  "file-watch.recursive",
  "file-watch.confined",
  "file-watch.burst-bounded",
  "file-watch.ends-with-sandbox",
  "file-watch.refused",

  "terminals.interactive-shell",
  "terminals.size-and-resize",
  "terminals.kill-verified",
  "terminals.timeout-and-callback",
  "terminals.end-with-sandbox",
  "terminals.refused",

  "run-code.stdout",
  "run-code.error",
  "run-code.results-null",
  "run-code.rich-results",
  "run-code.rich-html",
  "run-code.rich-display-order",
  "run-code.rich-png",
  "run-code.fresh-each-run",
  "run-code.unknown-language",
  "run-code.refused",

  "code-contexts.state-kept",
  "code-contexts.isolated",
  "code-contexts.timeout-keeps-others",
  "code-contexts.refused",

  "network.deny-blocks",
  "network.allow-reaches",
  "network.allowlist",
  "network.allowlist-proxy-variables-unset",
  "network.allowlist-per-sandbox",
  "network.allowlist-audit",
  "network.allowlist-refused",
  "network.audit-policy",

  "secrets.usable-not-leaked",
  "secrets.absent-from-errors",

  "credentials.issue-once",
  "credentials.revoke-on-kill",
  "credentials.revoke-on-dispose",
  "credentials.revoke-on-lifetime",
  "credentials.revoke-on-lost",
  "credentials.revoke-failure-reported",

  "audit.shape",
  "audit.environment-names",

  "mounts.read-only",
  "mounts.read-only-files-api",
  "mounts.read-write",
  "mounts.refused",

  "limits.applied",
  "limits.refused",
  "limits.memory-measured",
  "limits.cpus-measured",
  "limits.pids-measured",

  "isolation.no-capabilities",
  "isolation.read-only-root",
  "isolation.no-host-sockets",
  "isolation.no-inherited-descriptors",

  "user.root",

  "settings.unknown-key-refused",

  "reconnect.sees-files",
  "reconnect.refused",

  "concurrency.parallel-sandboxes-isolated",
  "concurrency.parallel-commands",

  "output-caps.commands-flood",
  "output-caps.run-code-flood",
  "output-caps.run-code-default-cap",
  "output-caps.throwing-callback",

  "verified-kills.timeout-setsid-env-escape",
  "verified-kills.abort-setsid-env-escape",
  "verified-kills.handle-kill-escape",

  "read-limits.whole-read-refused",
  "read-limits.stream-limit",
  "read-limits.download-limit",

  "secret-encodings.partial-output",
  "secret-encodings.command-partial-output",
  "secret-encodings.error-fields",
  "secret-encodings.audit",
  "secret-encodings.short-values-refused",

  "lost-sandbox.every-call",
  "lost-sandbox.first-call-is-a-file-operation",
  "lost-sandbox.mid-command",
  "lost-sandbox.lifetime-ends",
] as const;

/** One contract test id, for example `"commands.timeout-kills-tree"`. */
export type ContractTestId = (typeof CONTRACT_TEST_IDS)[number];
