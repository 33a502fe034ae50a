import { posix } from "node:path";
import type { Readable } from "node:stream";
import { FileNotFoundError, PathError, ProviderError, type FileEntry } from "@sbx/core";
import type Docker from "dockerode";
import { engineMessage, statusCodeOf } from "./docker-client.js";
import { runArgv } from "./exec-process.js";
import { toSizedSource } from "./sized-source.js";
import { packSingleFile, readSingleEntry } from "./tar-archive.js";

/** Go `os.FileMode` type bits, as the engine reports them in the archive stat header. */
const MODE_DIRECTORY = 2 ** 31;
const MODE_SYMLINK = 2 ** 27;

/** The engine's archive stat (header `X-Docker-Container-Path-Stat`). */
interface ArchiveStat {
  readonly name: string;
  readonly size: number;
  readonly mode: number;
  readonly mtime: string;
  readonly linkTarget: string;
}

/** Lists one directory level: one record per entry, `type|size|mtime\nname\0`, names passed as argv only. */
const LIST_SCRIPT = [
  '[ -e "$1" ] || exit 44',
  '[ -d "$1" ] || exit 45',
  'for f in "$1"/* "$1"/.[!.]* "$1"/..?*; do',
  '  [ -e "$f" ] || [ -L "$f" ] || continue',
  "  stat -c '%F|%s|%Y' -- \"$f\" || continue",
  "  printf '%s\\0' \"${f##*/}\"",
  "done",
].join("\n");

const REMOVE_SCRIPT = '[ -e "$1" ] || [ -L "$1" ] || exit 44; if [ "$2" = recursive ]; then exec rm -rf -- "$1"; fi; if [ -d "$1" ] && [ ! -L "$1" ]; then exit 45; fi; exec rm -f -- "$1"';
const MKDIR_SCRIPT = 'if [ -e "$1" ] && [ ! -d "$1" ]; then exit 46; fi; exec mkdir -p -- "$1"';
const RENAME_SCRIPT = '[ -e "$1" ] || [ -L "$1" ] || exit 44; if [ -d "$2" ] && [ ! -L "$2" ] && [ ! -d "$1" ]; then exit 45; fi; exec mv -f -- "$1" "$2"';

function entryType(typeText: string): FileEntry["type"] {
  if (typeText.startsWith("regular")) return "file";
  if (typeText === "directory") return "directory";
  if (typeText === "symbolic link") return "symlink";
  return "other";
}

/** The files half of the Docker driver: archive API for bytes, argv-only execs for the rest. */
export class SandboxFiles {
  constructor(
    private readonly container: Docker.Container,
    private readonly user: string,
    private readonly workspace: string,
  ) {}

  private notFound(path: string): FileNotFoundError {
    return new FileNotFoundError({ path, backend: "docker" });
  }

  private failed(operation: string, path: string, detail: string): ProviderError {
    return new ProviderError({ backend: "docker", message: `Could not ${operation} ${JSON.stringify(path)} in the sandbox: ${detail.trim() || "the engine gave no reason"}.` });
  }

  /** Archive HEAD: the engine's lstat of a path (a final symlink is not followed). */
  private async archiveStat(path: string, signal?: AbortSignal): Promise<ArchiveStat | undefined> {
    try {
      const response = (await this.container.infoArchive({ path, abortSignal: signal })) as unknown as Readable & { headers: Record<string, string> };
      response.resume?.();
      const header = response.headers?.["x-docker-container-path-stat"];
      if (!header) throw new Error("the engine sent no path stat header");
      return JSON.parse(Buffer.from(header, "base64").toString("utf8")) as ArchiveStat;
    } catch (error) {
      if (statusCodeOf(error) === 404) return undefined;
      throw error;
    }
  }

  /** Streams a regular file out through the archive API. */
  async readFile(path: string, options: { signal?: AbortSignal }): Promise<ReadableStream<Uint8Array>> {
    let response: Readable;
    try {
      response = (await this.container.getArchive({ path, abortSignal: options.signal })) as unknown as Readable;
    } catch (error) {
      if (statusCodeOf(error) === 404) throw this.notFound(path);
      throw error;
    }
    const entry = await readSingleEntry(response, posix.basename(path), path, options.signal);
    return entry.body;
  }

  /** Streams a file in through the archive API, creating parent directories, replacing an existing file. */
  async writeFile(path: string, data: ReadableStream<Uint8Array>, options: { signal?: AbortSignal; sizeBytes?: number }): Promise<void> {
    const parent = posix.dirname(path);
    const name = posix.basename(path);
    if (parent !== this.workspace) {
      const parentStat = await this.archiveStat(parent, options.signal);
      if (!parentStat) await this.mkdir(parent, options);
      else if ((parentStat.mode & MODE_DIRECTORY) === 0) throw new PathError({ path, reason: "not-a-directory", backend: "docker", message: `Cannot write ${JSON.stringify(path)}: ${parent} is not a directory.` });
    }
    const source = await toSizedSource(data, options.sizeBytes);
    try {
      const [uid, gid] = this.user.split(":").map(Number);
      const archive = packSingleFile({ name, size: source.size, uid: uid!, gid: gid! }, source.chunks, options.signal);
      try {
        await this.container.putArchive(archive as unknown as NodeJS.ReadableStream, { path: parent, noOverwriteDirNonDir: "true", abortSignal: options.signal } as unknown as Record<string, string>);
      } catch (error) {
        archive.destroy();
        const message = engineMessage(error);
        if (/cannot overwrite (a )?(non-)?directory/i.test(message)) throw new PathError({ path, reason: "is-a-directory", backend: "docker", message: `Cannot write ${JSON.stringify(path)}: a directory is in the way.` });
        if (statusCodeOf(error) === 404) throw this.notFound(parent);
        throw this.failed("write", path, message);
      }
    } finally {
      await source.cleanup();
    }
  }

  /** Lists one directory level. */
  async list(path: string, _options: { signal?: AbortSignal }): Promise<FileEntry[]> {
    const result = await runArgv(this.container, ["sh", "-c", LIST_SCRIPT, "sbx-list", path], { user: this.user });
    if (result.exitCode === 44) throw this.notFound(path);
    if (result.exitCode === 45) throw new PathError({ path, reason: "not-a-directory", backend: "docker", message: `Cannot list ${JSON.stringify(path)}: it is not a directory.` });
    if (result.exitCode !== 0) throw this.failed("list", path, result.stderr);
    const entries: FileEntry[] = [];
    let offset = 0;
    const output = result.stdout;
    while (offset < output.length) {
      const end = output.indexOf(0, offset);
      if (end < 0) break;
      const record = output.subarray(offset, end).toString("utf8");
      offset = end + 1;
      const newline = record.indexOf("\n");
      if (newline < 0) continue;
      const [typeText = "", sizeText = "0", mtimeText = "0"] = record.slice(0, newline).split("|");
      const name = record.slice(newline + 1);
      entries.push({ name, path: posix.join(path, name), type: entryType(typeText), size: Number(sizeText), modifiedAt: new Date(Number(mtimeText) * 1000) });
    }
    return entries.sort((left, right) => (left.name < right.name ? -1 : left.name > right.name ? 1 : 0));
  }

  /** Describes an entry without following a final symlink (archive HEAD: no exec). */
  async stat(path: string, options: { signal?: AbortSignal }): Promise<FileEntry> {
    const info = await this.archiveStat(path, options.signal);
    if (!info) throw this.notFound(path);
    const type: FileEntry["type"] = info.mode & MODE_DIRECTORY ? "directory" : info.mode & MODE_SYMLINK ? "symlink" : (info.mode & 0xfff00000) === 0 && (info.mode & (2 ** 26 | 2 ** 25 | 2 ** 24 | 2 ** 21 | 2 ** 19)) === 0 ? "file" : "other";
    const modified = new Date(info.mtime);
    return { name: posix.basename(path), path, type, size: info.size, modifiedAt: Number.isNaN(modified.getTime()) ? null : modified };
  }

  /** Removes a file, or a directory when `recursive`. */
  async remove(path: string, options: { recursive: boolean; signal?: AbortSignal }): Promise<void> {
    const result = await runArgv(this.container, ["sh", "-c", REMOVE_SCRIPT, "sbx-remove", path, options.recursive ? "recursive" : "single"], { user: this.user });
    if (result.exitCode === 44) throw this.notFound(path);
    if (result.exitCode === 45) throw new PathError({ path, reason: "is-a-directory", backend: "docker", message: `Cannot remove ${JSON.stringify(path)}: it is a directory; pass { recursive: true }.` });
    if (result.exitCode !== 0) throw this.failed("remove", path, result.stderr);
  }

  /** Creates a directory and its parents. */
  async mkdir(path: string, _options: { signal?: AbortSignal }): Promise<void> {
    const result = await runArgv(this.container, ["sh", "-c", MKDIR_SCRIPT, "sbx-mkdir", path], { user: this.user });
    if (result.exitCode === 46) throw new PathError({ path, reason: "not-a-directory", backend: "docker", message: `Cannot create directory ${JSON.stringify(path)}: a file is in the way.` });
    if (result.exitCode !== 0) {
      if (/not a directory|file exists/i.test(result.stderr)) throw new PathError({ path, reason: "not-a-directory", backend: "docker", message: `Cannot create directory ${JSON.stringify(path)}: a file is in the way.` });
      throw this.failed("create directory", path, result.stderr);
    }
  }

  /** Renames or moves an entry. */
  async rename(from: string, to: string, _options: { signal?: AbortSignal }): Promise<void> {
    const result = await runArgv(this.container, ["sh", "-c", RENAME_SCRIPT, "sbx-rename", from, to], { user: this.user });
    if (result.exitCode === 44) throw this.notFound(from);
    if (result.exitCode === 45) throw new PathError({ path: to, reason: "is-a-directory", backend: "docker", message: `Cannot rename ${JSON.stringify(from)} onto ${JSON.stringify(to)}: a directory is in the way.` });
    if (result.exitCode !== 0) {
      if (/no such file or directory/i.test(result.stderr)) throw this.notFound(posix.dirname(to));
      throw this.failed("rename", from, result.stderr);
    }
  }
}
