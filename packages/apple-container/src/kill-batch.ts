/** Most tags one kill exec takes (each is about ten bytes of one argument; the kernel caps an argument at 128 KiB). */
const MAX_TAGS_PER_EXEC = 1000;

/**
 * Coalesces the verified kills asked for in the same turn of the event loop into one root exec: a sandbox killed with
 * many live commands costs one `container exec` of the kill helper, not one per command. Every caller of a batch gets
 * that batch's outcome. (The same rule as `@sbx/docker`'s `kill-batch.ts`, adr/0030.)
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
