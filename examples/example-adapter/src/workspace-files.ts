import { constants } from "node:fs";
import { lstat, mkdir, open, readdir, realpath, rename, rm, rmdir } from "node:fs/promises";
import { basename, dirname } from "node:path";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { FileNotFoundError, PathError, type FileEntry } from "@sbx/core";

/**
 * The files primitives over a host folder. Core has already normalised every path (absolute, inside the
 * workspace, no `..`); what is left for the adapter is symlinks: a command may create `link -> /etc`, so every
 * path's existing part is resolved and must stay inside the workspace, and final components are opened with
 * O_NOFOLLOW.
 */
export class WorkspaceFiles {
  constructor(private readonly workspace: string) {}

  /** Throws `PathError` if the deepest existing ancestor of `path` resolves outside the workspace. */
  private async confine(path: string): Promise<void> {
    let existing = path;
    for (;;) {
      const resolved = await realpath(existing).catch(() => undefined);
      if (resolved !== undefined) {
        if (resolved !== this.workspace && !resolved.startsWith(`${this.workspace}/`)) {
          throw new PathError({ path, reason: "escapes-workspace", message: `Refused path ${path}: a symlink leads outside the workspace.` });
        }
        return;
      }
      existing = dirname(existing);
    }
  }

  private async mapErrors<Result>(path: string, work: () => Promise<Result>): Promise<Result> {
    await this.confine(path);
    try {
      return await work();
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === "ENOENT") throw new FileNotFoundError({ path });
      if (code === "ELOOP") throw new PathError({ path, reason: "not-a-regular-file" });
      if (code === "EISDIR") throw new PathError({ path, reason: "is-a-directory" });
      if (code === "ENOTDIR") throw new PathError({ path, reason: "not-a-directory" });
      throw error;
    }
  }

  private async entry(path: string): Promise<FileEntry> {
    const info = await lstat(path);
    const type = info.isFile() ? "file" : info.isDirectory() ? "directory" : info.isSymbolicLink() ? "symlink" : "other";
    return { name: basename(path), path, type, size: info.size, modifiedAt: info.mtime };
  }

  async readFile(path: string): Promise<ReadableStream<Uint8Array>> {
    return this.mapErrors(path, async () => {
      const handle = await open(path, constants.O_RDONLY | constants.O_NOFOLLOW);
      if (!(await handle.stat()).isFile()) {
        await handle.close();
        throw new PathError({ path, reason: "not-a-regular-file" });
      }
      return Readable.toWeb(handle.createReadStream()) as ReadableStream<Uint8Array>;
    });
  }

  async writeFile(path: string, data: ReadableStream<Uint8Array>): Promise<void> {
    await this.mkdir(dirname(path));
    await this.mapErrors(path, async () => {
      const handle = await open(path, constants.O_WRONLY | constants.O_CREAT | constants.O_TRUNC | constants.O_NOFOLLOW, 0o644);
      await pipeline(Readable.fromWeb(data as import("node:stream/web").ReadableStream<Uint8Array>), handle.createWriteStream());
    });
  }

  list(path: string): Promise<FileEntry[]> {
    return this.mapErrors(path, async () => Promise.all((await readdir(path)).sort().map((name) => this.entry(`${path}/${name}`))));
  }

  stat(path: string): Promise<FileEntry> {
    return this.mapErrors(path, () => this.entry(path));
  }

  remove(path: string, recursive: boolean): Promise<void> {
    return this.mapErrors(path, async () => {
      const info = await lstat(path);
      if (info.isDirectory() && !recursive) await rmdir(path);
      else await rm(path, { recursive });
    });
  }

  mkdir(path: string): Promise<void> {
    return this.mapErrors(path, async () => void (await mkdir(path, { recursive: true })));
  }

  async rename(from: string, to: string): Promise<void> {
    await this.confine(to);
    await this.mkdir(dirname(to));
    await this.mapErrors(from, () => rename(from, to));
  }
}
