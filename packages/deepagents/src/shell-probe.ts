import type { Sandbox } from "@sbx/core";

/**
 * A command that succeeds only where the sandbox's shell runs what deepagents' `BaseSandbox` sends for `ls`, `glob`,
 * `grep` and `read`: GNU `find -L … -printf`, `stat -c`, `grep -rHnF` (exit 1 for no match) and `awk` with
 * `printf`, all against `/dev/null`. A POSIX container passes; the in-process fake (just-bash, no `/dev/null`, no
 * `find -L`, no `grep -H`) does not.
 */
export const SHELL_PROBE =
  "find -L /dev/null -maxdepth 0 -printf '' >/dev/null 2>&1 && stat -c %s /dev/null >/dev/null 2>&1 && " +
  "{ grep -rHnF -e sbx-probe /dev/null >/dev/null 2>&1; [ $? -eq 1 ]; } && " +
  `awk 'BEGIN { printf "%6d\\t%s\\n", 1, "x" }' </dev/null >/dev/null 2>&1`;

/** Whether the sandbox's shell runs deepagents' `BaseSandbox` commands (asked from inside the sandbox, once). */
export async function shellRunsBaseSandboxCommands(sandbox: Sandbox): Promise<boolean> {
  const result = await sandbox.commands.run(SHELL_PROBE, { timeoutMs: 30_000, outputLimitBytes: 4096 });
  return result.exitCode === 0;
}
