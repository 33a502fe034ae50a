/** Most tags one kill exec takes (each is about ten bytes of one argument; the kernel caps an argument at 128 KiB). */
const MAX_TAGS_PER_EXEC = 1000;

/**
 * Coalesces the verified kills asked for in the same turn of the event loop into one call of `killMany` (adr/0030):
 * a sandbox killed with hundreds of live commands costs one kill exec, not one per command (on Docker that swamped the
 * engine: the destroy behind them was not confirmed within 30 s). At most 1000 tags go to one call. Every caller of a
 * batch gets that batch's outcome. Used by the Docker and Apple `container` adapters.
 */
export function createKillBatcher(killMany: (tags: readonly string[]) => Promise<void>): (tag: string) => Promise<void> {
  let open: { tags: string[]; done: Promise<void> } | undefined;
  return (tag) => {
    if (!open || open.tags.length >= MAX_TAGS_PER_EXEC) {
      const batch: { tags: string[]; done: Promise<void> } = { tags: [], done: Promise.resolve() };
      batch.done = new Promise<void>((resolve) => setImmediate(resolve)).then(() => {
        if (open === batch) open = undefined;
        return killMany(batch.tags);
      });
      open = batch;
    }
    open.tags.push(tag);
    return open.done;
  };
}
