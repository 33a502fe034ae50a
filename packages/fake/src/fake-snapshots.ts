import { InvalidArgumentError, type SandboxSnapshot } from "@sbx/core";
import type { IFileSystem } from "just-bash";

/** One entry of a fake snapshot: a directory, a file with its bytes, or a symbolic link with its target. */
type SnapshotEntry =
  | { readonly path: string; readonly kind: "directory"; readonly mode: number }
  | { readonly path: string; readonly kind: "file"; readonly mode: number; readonly content: Uint8Array }
  | { readonly path: string; readonly kind: "symlink"; readonly target: string };

/** Directories just-bash provides itself rather than holds as files: never copied. */
const VIRTUAL_DIRECTORIES = ["/dev", "/proc", "/sys"];

/** The ids the fake makes: `fake-snapshot-<uuid>`. */
const FAKE_SNAPSHOT_ID = /^fake-snapshot-[0-9a-f-]{36}$/;

/**
 * Every fake snapshot of this process (ADR 0056): a copy of a fake sandbox's in-memory file system (every path but the
 * host mounts), held in this process's memory until `deleteSnapshot` or the process ends. Process-wide, like the fake's
 * sandbox directory: any fake provider of the process lists, deletes and creates from them.
 */
export class FakeSnapshotStore {
  private readonly snapshots = new Map<string, { readonly snapshot: SandboxSnapshot; readonly entries: readonly SnapshotEntry[] }>();

  /** Copies `fs` (every path outside the host `mounts` and just-bash's virtual directories) into a new snapshot. */
  async take(fs: IFileSystem, mounts: readonly string[]): Promise<SandboxSnapshot> {
    const excluded = [...mounts, ...VIRTUAL_DIRECTORIES];
    const entries: SnapshotEntry[] = [];
    let sizeBytes = 0;
    const inside = (path: string, root: string) => path === root || path.startsWith(root === "/" ? "/" : `${root}/`);
    const walk = async (directory: string): Promise<void> => {
      for (const name of (await fs.readdir(directory)).sort()) {
        const path = directory === "/" ? `/${name}` : `${directory}/${name}`;
        if (excluded.some((root) => inside(path, root))) continue;
        const stat = await fs.lstat(path);
        if (stat.isSymbolicLink) entries.push({ path, kind: "symlink", target: await fs.readlink(path) });
        else if (stat.isDirectory) {
          entries.push({ path, kind: "directory", mode: stat.mode });
          await walk(path);
        } else if (stat.isFile) {
          const content = Uint8Array.from(await fs.readFileBuffer(path));
          sizeBytes += content.byteLength;
          entries.push({ path, kind: "file", mode: stat.mode, content });
        }
      }
    };
    await walk("/");
    const snapshot: SandboxSnapshot = { id: `fake-snapshot-${crypto.randomUUID()}`, createdAt: new Date().toISOString(), backend: "fake", sizeBytes };
    this.snapshots.set(snapshot.id, { snapshot, entries });
    return snapshot;
  }

  /** Writes snapshot `id`'s entries into a new sandbox's `fs`; `InvalidArgumentError` on `options.fromSnapshot` when there is none. */
  async restore(id: string, fs: IFileSystem): Promise<void> {
    const held = this.snapshots.get(id);
    if (!held)
      throw new InvalidArgumentError({
        field: "options.fromSnapshot",
        backend: "fake",
        message: `Invalid options.fromSnapshot: this process holds no fake snapshot ${JSON.stringify(id)} (deleted, or taken in another process).`,
      });
    for (const entry of held.entries) {
      if (entry.kind === "directory") {
        await fs.mkdir(entry.path, { recursive: true });
        await fs.chmod(entry.path, entry.mode & 0o7777);
      } else if (entry.kind === "file") {
        await fs.writeFile(entry.path, Uint8Array.from(entry.content));
        await fs.chmod(entry.path, entry.mode & 0o7777);
      } else {
        await fs.rm(entry.path, { force: true });
        await fs.symlink(entry.target, entry.path);
      }
    }
  }

  /** The snapshots held, oldest first. */
  list(): SandboxSnapshot[] {
    return [...this.snapshots.values()].map((held) => held.snapshot);
  }

  /** Forgets snapshot `id` (its memory is freed); `false` when there was none. Refuses an id the fake never makes. */
  delete(id: string): boolean {
    if (!FAKE_SNAPSHOT_ID.test(id))
      throw new InvalidArgumentError({
        field: "id",
        backend: "fake",
        message: `Invalid id: ${JSON.stringify(id)} is not a fake snapshot id (fake-snapshot-<uuid>).`,
      });
    return this.snapshots.delete(id);
  }
}

/** The process-wide store every fake provider shares. */
export const fakeSnapshots = new FakeSnapshotStore();
