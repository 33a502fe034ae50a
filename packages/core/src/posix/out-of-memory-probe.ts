/**
 * The OOM probe of core's POSIX helper set: prints the cgroup's out-of-memory kill counter (cgroup v1
 * `memory.oom_control` or v2 `memory.events`, a line `oom_kill N`). Run it before and after a command that died of
 * SIGKILL (exit 137); a counter that grew means the kernel's OOM killer ended it.
 */
export const OUT_OF_MEMORY_PROBE_SCRIPT = "cat /sys/fs/cgroup/memory/memory.oom_control 2>/dev/null || cat /sys/fs/cgroup/memory.events 2>/dev/null";

/** Reads the `oom_kill` counter from the probe's output; null when the sandbox exposes no cgroup memory counters. */
export function parseOutOfMemoryKills(output: string): number | null {
  const match = /^oom_kill (\d+)$/m.exec(output);
  return match ? Number(match[1]) : null;
}

/**
 * Tracks the OOM kill counter of one sandbox: `changed()` reads it and says whether it grew since the last read
 * (null when unknown). `read` runs `OUT_OF_MEMORY_PROBE_SCRIPT` the adapter's way (for Docker: an exec as root).
 */
export function createOutOfMemoryProbe(read: () => Promise<string>, baseline: number | null = null): { changed(): Promise<boolean | null> } {
  let last = baseline;
  return {
    async changed() {
      const count = parseOutOfMemoryKills(await read().catch(() => ""));
      if (count === null) return null;
      const previous = last ?? 0;
      last = count;
      return count > previous;
    },
  };
}

/**
 * What a command's result may say about the out-of-memory killer, from whether the sandbox's `oom_kill` counter grew
 * while the command ran (adr/0030). The counter says the OOM killer ended *some* process of the sandbox, not which
 * one: a command that SIGKILLs itself while another process hits the memory limit looks the same as a command the
 * OOM killer ended, and no engine-level source names the victim. So a grown counter is reported as unknown (`null`),
 * never `true`; an unchanged counter is a known `false` (the OOM killer ended nothing while the command ran).
 */
export function commandOutOfMemoryReport(counterGrew: boolean | null): false | null {
  return counterGrew === false ? false : null;
}
