import { createOutOfMemoryProbe, OUT_OF_MEMORY_PROBE_SCRIPT, parseOutOfMemoryKills } from "@sbx/core/adapter";
import type Docker from "dockerode";
import { runArgv } from "./exec-process.js";
import { ENFORCEMENT_USER } from "./kill-process-tree.js";

/** Runs core's OOM probe (the cgroup's `oom_kill` counter) as root, which sandboxed code cannot interfere with. */
async function readOutOfMemoryCounters(container: Docker.Container): Promise<string> {
  const result = await runArgv(container, ["sh", "-c", OUT_OF_MEMORY_PROBE_SCRIPT], { user: ENFORCEMENT_USER, maxOutputBytes: 4096 });
  return result.stdout.toString("utf8");
}

/** The sandbox's OOM kill count now, for `connect`'s baseline; null when it cannot be read. */
export async function outOfMemoryBaseline(container: Docker.Container): Promise<number | null> {
  return parseOutOfMemoryKills(await readOutOfMemoryCounters(container).catch(() => ""));
}

/**
 * The check a SIGKILL exit (137) asks: whether the sandbox's OOM kill counter grew since it was last read (null:
 * unknown), starting from `baseline` (0 for a new sandbox).
 */
export function createOutOfMemoryCheck(container: Docker.Container, baseline: number | null): () => Promise<boolean | null> {
  const probe = createOutOfMemoryProbe(() => readOutOfMemoryCounters(container), baseline);
  return () => probe.changed();
}
