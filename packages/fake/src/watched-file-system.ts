import { AsyncLocalStorage } from "node:async_hooks";
import { MountableFs, type IFileSystem } from "just-bash";
import type { FileWatchEvent } from "@sbx/core";

/** One watch on the fake's file system: a directory, whether it reaches below it, and where its events go. */
interface FakeWatch {
  readonly directory: string;
  readonly recursive: boolean;
  readonly onEvent: (event: FileWatchEvent) => void;
}

/** The parent directory of an absolute path. */
function parentOf(path: string): string {
  return path.slice(0, path.lastIndexOf("/")) || "/";
}

/**
 * The fake's in-memory file system with file watching (ADR 0049): every mutation, by the shell, by Python or by the
 * files API, tells the watches that cover it, in the order it happened. A watch covers a path when the path's parent is
 * the watched directory, or (recursive) when the path lies below it. Nothing is buffered here: core's queue bounds it.
 */
export class WatchedFileSystem extends MountableFs {
  private readonly watches = new Set<FakeWatch>();
  /**
   * Set inside a mutation's own work: a move across mounts is a copy and a remove through `this`, and those inner
   * calls must not report events of their own (the move reports one). Async-context scoped, so a mutation running at
   * the same time elsewhere still reports its events.
   */
  private readonly inner = new AsyncLocalStorage<true>();

  /** Runs a mutation's work with the inner calls silenced. */
  private quietly<Result>(work: () => Promise<Result>): Promise<Result> {
    return this.inner.run(true, work);
  }

  /** Starts telling `watch.onEvent` about changes; returns the function that stops it. */
  watch(watch: FakeWatch): () => void {
    this.watches.add(watch);
    return () => this.watches.delete(watch);
  }

  private covers(watch: FakeWatch, path: string): boolean {
    if (path === watch.directory) return false;
    const prefix = watch.directory === "/" ? "/" : `${watch.directory}/`;
    return watch.recursive ? path.startsWith(prefix) : parentOf(path) === watch.directory;
  }

  private emit(type: "create" | "write" | "remove", path: string, isDirectory: boolean): void {
    if (this.inner.getStore()) return;
    for (const watch of this.watches) if (this.covers(watch, path)) watch.onEvent({ type, path, isDirectory });
  }

  private async kind(path: string): Promise<"directory" | "other" | undefined> {
    const stat = await super.lstat(path).catch(() => undefined);
    if (!stat) return undefined;
    return stat.isDirectory ? "directory" : "other";
  }

  /** Every entry under `path` (deepest first when `deepestFirst`), for removes and copies of whole trees. */
  private async tree(path: string, deepestFirst: boolean): Promise<{ path: string; isDirectory: boolean }[]> {
    const kind = await this.kind(path);
    if (!kind) return [];
    const own = { path, isDirectory: kind === "directory" };
    if (kind !== "directory") return [own];
    const children: { path: string; isDirectory: boolean }[] = [];
    for (const name of await super.readdir(path).catch(() => [] as string[])) children.push(...(await this.tree(`${path}/${name}`, deepestFirst)));
    return deepestFirst ? [...children, own] : [own, ...children];
  }

  override async writeFile(...args: Parameters<IFileSystem["writeFile"]>): Promise<void> {
    const existed = (await this.kind(args[0])) !== undefined;
    await this.quietly(() => super.writeFile(...args));
    this.emit(existed ? "write" : "create", args[0], false);
  }

  override async appendFile(...args: Parameters<IFileSystem["appendFile"]>): Promise<void> {
    const existed = (await this.kind(args[0])) !== undefined;
    await this.quietly(() => super.appendFile(...args));
    this.emit(existed ? "write" : "create", args[0], false);
  }

  override async mkdir(...args: Parameters<IFileSystem["mkdir"]>): Promise<void> {
    const missing: string[] = [];
    for (let path = args[0]; path !== "/" && (await this.kind(path)) === undefined; path = parentOf(path)) missing.unshift(path);
    await this.quietly(() => super.mkdir(...args));
    for (const path of missing) this.emit("create", path, true);
  }

  override async rm(...args: Parameters<IFileSystem["rm"]>): Promise<void> {
    const removed = this.watches.size > 0 ? await this.tree(args[0], true) : [];
    await this.quietly(() => super.rm(...args));
    for (const entry of removed) this.emit("remove", entry.path, entry.isDirectory);
  }

  override async cp(...args: Parameters<IFileSystem["cp"]>): Promise<void> {
    const existed = (await this.kind(args[1])) !== undefined;
    await this.quietly(() => super.cp(...args));
    const copied = this.watches.size > 0 ? await this.tree(args[1], false) : [];
    for (const [index, entry] of copied.entries())
      this.emit(index === 0 && existed && !entry.isDirectory ? "write" : "create", entry.path, entry.isDirectory);
  }

  override async mv(source: string, destination: string): Promise<void> {
    const kind = await this.kind(source);
    await this.quietly(() => super.mv(source, destination));
    const isDirectory = kind === "directory";
    if (this.inner.getStore()) return;
    for (const watch of this.watches) {
      const from = this.covers(watch, source);
      const to = this.covers(watch, destination);
      if (from && to) watch.onEvent({ type: "rename", path: destination, from: source, isDirectory });
      else if (from) watch.onEvent({ type: "remove", path: source, isDirectory });
      else if (to) watch.onEvent({ type: "create", path: destination, isDirectory });
    }
  }

  override async symlink(target: string, linkPath: string): Promise<void> {
    await this.quietly(() => super.symlink(target, linkPath));
    this.emit("create", linkPath, false);
  }

  override async link(existingPath: string, newPath: string): Promise<void> {
    await this.quietly(() => super.link(existingPath, newPath));
    this.emit("create", newPath, false);
  }
}
