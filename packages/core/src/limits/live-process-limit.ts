/** Default most commands running at once in one sandbox (`maxLiveProcesses`, adr/0030). */
export const DEFAULT_MAX_LIVE_PROCESSES = 256;

/** The `maxLiveProcesses` bound of a sandbox's options, with core's default. */
export function maxLiveProcessesOf(options: { readonly maxLiveProcesses?: number }): number {
  return options.maxLiveProcesses ?? DEFAULT_MAX_LIVE_PROCESSES;
}
