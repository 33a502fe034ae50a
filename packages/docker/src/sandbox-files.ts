import { randomBytes } from "node:crypto";
import { posix } from "node:path";
import { FileNotFoundError, PathError, ProviderError, type FileEntry } from "@sbx/core";
import type Docker from "dockerode";
import { execRead, execWrite } from "./exec-file-io.js";
import { runArgv } from "./exec-process.js";
import { scrubHostPaths } from "./sandbox-lost.js";

/** Longest single path segment Linux accepts (NAME_MAX), in bytes. */
const NAME_MAX_BYTES = 255;

/**
 * Shell functions every file script starts with. `$SBX_WORKSPACE` is the workspace. `inside` tests a resolved path;
 * `confine_parent` resolves (as the sandbox user, inside the sandbox) the deepest existing ancestor of `$1`'s
 * parent and exits 47 if it lies outside the workspace, so an intermediate symlink can never lead out of it.
 * Exit codes: 44 not found, 45 is a directory / not a directory, 46 a file is in the way, 47 escapes the workspace,
 * 48 not a regular file, 49 no space left.
 */
const PRELUDE = [
  'W=$SBX_WORKSPACE',
  'inside() { case "$1" in "$W"|"$W"/*) return 0;; esac; return 1; }',
  'confine_parent() { [ "$1" = "$W" ] && return 0; a=${1%/*}; [ -z "$a" ] && a=/; while [ ! -e "$a" ]; do a=${a%/*}; [ -z "$a" ] && a=/; done; r=$(readlink -f -- "$a") || exit 47; inside "$r" || exit 47; }',
].join("\n");

/**
 * Streams a regular file to stdout under the file policy of ADR 0020: a final symlink is followed only while it stays
 * inside the workspace (the read runs as the sandbox user, so a link swapped in between reads nothing that user could
 * not read anyway); a directory exits 45, anything else that is not a regular file 48.
 */
const READ_SCRIPT = [
  PRELUDE,
  'confine_parent "$1"',
  '[ -e "$1" ] || [ -L "$1" ] || exit 44',
  'if [ -L "$1" ]; then r=$(readlink -f -- "$1") || exit 47; inside "$r" || exit 47; fi',
  '[ -e "$1" ] || exit 44',
  '[ -d "$1" ] && exit 45',
  '[ -f "$1" ] || exit 48',
  'exec cat -- "$1"',
].join("\n");

/**
 * Writes stdin to a temporary name next to the target, then renames it over the target (never following a final
 * symlink: it is replaced); removes the temporary file on any failure, so a failed write leaves nothing behind.
 * $1 the path, $2 a random suffix.
 */
const WRITE_SCRIPT = [
  PRELUDE,
  'd=${1%/*}; [ -z "$d" ] && d=/',
  'confine_parent "$1"',
  'if [ -e "$d" ] || [ -L "$d" ]; then [ -d "$d" ] || exit 46; else mkdir -p -- "$d" 2>/dev/null || exit 46; fi',
  'r=$(readlink -f -- "$d") || exit 47; inside "$r" || exit 47',
  '[ -d "$1" ] && [ ! -L "$1" ] && exit 45',
  't="$r/.sbx-upload-$2"',
  "trap 'rm -f -- \"$t\"' EXIT",
  'if ! cat > "$t"; then rm -f -- "$t"; df -P "$r" 2>/dev/null | awk \'NR==2 && $4 < 64 { exit 1 }\' || exit 49; exit 50; fi',
  'mv -fT -- "$t" "$r/${1##*/}" || exit 50',
  "trap - EXIT",
].join("\n");

/** Lists one directory level: one record per entry, `type|size|mtime\nname\0`, names passed as argv only. */
const LIST_SCRIPT = [
  PRELUDE,
  'confine_parent "$1"',
  '[ -e "$1" ] || exit 44',
  'r=$(readlink -f -- "$1") || exit 44; inside "$r" || exit 47',
  '[ -d "$1" ] || exit 45',
  'for f in "$1"/* "$1"/.[!.]* "$1"/..?*; do',
  '  [ -e "$f" ] || [ -L "$f" ] || continue',
  "  stat -c '%F|%s|%Y' -- \"$f\" || continue",
  "  printf '%s\\0' \"${f##*/}\"",
  "done",
].join("\n");

/** Describes one entry without following a final symlink: `type|size|mtime`. */
const STAT_SCRIPT = [PRELUDE, 'confine_parent "$1"', '[ -e "$1" ] || [ -L "$1" ] || exit 44', "exec stat -c '%F|%s|%Y' -- \"$1\""].join("\n");

const REMOVE_SCRIPT = [PRELUDE, 'confine_parent "$1"', '[ -e "$1" ] || [ -L "$1" ] || exit 44; if [ "$2" = recursive ]; then exec rm -rf -- "$1"; fi; if [ -d "$1" ] && [ ! -L "$1" ]; then exit 45; fi; exec rm -f -- "$1"'].join("\n");
const MKDIR_SCRIPT = [PRELUDE, 'confine_parent "$1"', 'if [ -L "$1" ]; then r=$(readlink -f -- "$1") || exit 46; inside "$r" || exit 47; fi', 'if [ -e "$1" ] && [ ! -d "$1" ]; then exit 46; fi; exec mkdir -p -- "$1"'].join("\n");
const RENAME_SCRIPT = [PRELUDE, 'confine_parent "$1"; confine_parent "$2"', '[ -e "$1" ] || [ -L "$1" ] || exit 44; if [ -d "$2" ] && [ ! -L "$2" ] && [ ! -d "$1" ]; then exit 45; fi; if [ -L "$2" ]; then exec mv -fT -- "$1" "$2"; fi; exec mv -f -- "$1" "$2"'].join("\n");

function entryType(typeText: string): FileEntry["type"] {
  if (typeText.startsWith("regular")) return "file";
  if (typeText === "directory") return "directory";
  if (typeText === "symbolic link") return "symlink";
  return "other";
}

/**
 * The files half of the Docker driver. Every operation is an exec as the sandbox user with paths passed as
 * arguments (never interpolated): the kernel resolves symlinks inside the sandbox with that user's rights, each
 * script refuses a path whose resolved parent leaves the workspace, and nothing runs with more rights than the
 * sandbox's own code (the engine's archive API, which resolves paths as root, is not used).
 */
export class SandboxFiles {
  private readonly environment: string[];

  constructor(
    private readonly container: Docker.Container,
    private readonly user: string,
    private readonly workspace: string,
  ) {
    this.environment = [`SBX_WORKSPACE=${workspace}`, "LC_ALL=C"];
  }

  private notFound(path: string): FileNotFoundError {
    return new FileNotFoundError({ path, backend: "docker" });
  }

  private failed(operation: string, path: string, detail: string): ProviderError {
    return new ProviderError({ backend: "docker", message: `Could not ${operation} ${JSON.stringify(path)} in the sandbox: ${scrubHostPaths(detail.trim()) || "the sandbox gave no reason"}.` });
  }

  private escapes(path: string): PathError {
    return new PathError({ path, reason: "escapes-workspace", backend: "docker", message: `Refused path ${JSON.stringify(path)}: a symbolic link in it leads outside the workspace ${this.workspace}. The files API resolves links inside the sandbox and stays in the workspace.` });
  }

  /** Refuses names the kernel would refuse (a segment over 255 bytes), before anything reaches the sandbox. */
  private checkNames(path: string): void {
    for (const segment of path.split("/")) {
      if (Buffer.byteLength(segment) > NAME_MAX_BYTES) {
        throw new PathError({ path: path.length > 80 ? `${path.slice(0, 80)}…` : path, reason: "invalid", backend: "docker", message: `Refused path: the name ${JSON.stringify(segment.slice(0, 32) + "…")} is ${Buffer.byteLength(segment)} bytes long; Linux allows at most ${NAME_MAX_BYTES} bytes per name.` });
      }
    }
  }

  private run(script: string, name: string, args: readonly string[]) {
    return runArgv(this.container, ["sh", "-c", script, name, ...args], { user: this.user, env: this.environment });
  }

  /** Streams a regular file out, as the sandbox user. */
  async readFile(path: string, options: { signal?: AbortSignal }): Promise<ReadableStream<Uint8Array>> {
    this.checkNames(path);
    const start = await execRead(this.container, ["sh", "-c", READ_SCRIPT, "sbx-read", path], { user: this.user, env: this.environment, signal: options.signal });
    if (start.kind === "streaming") return start.body;
    if (start.exitCode === 0) return new ReadableStream<Uint8Array>({ start: (controller) => controller.close() });
    if (start.exitCode === 44) throw this.notFound(path);
    if (start.exitCode === 47) throw this.escapes(path);
    if (start.exitCode === 45) throw new PathError({ path, reason: "is-a-directory", backend: "docker", message: `Refused to read ${JSON.stringify(path)}: it is a directory; use files.list.` });
    if (start.exitCode === 48) throw new PathError({ path, reason: "not-a-regular-file", backend: "docker", message: `Refused to read ${JSON.stringify(path)}: it is not a regular file (a device, FIFO or socket).` });
    if (/permission denied/i.test(start.stderr)) throw new PathError({ path, reason: "permission-denied", backend: "docker", message: `Cannot read ${JSON.stringify(path)}: the sandbox user may not read it (permission denied).` });
    throw this.failed("read", path, start.stderr);
  }

  /** Streams a file in, as the sandbox user: to a temporary name, renamed over the target once complete. */
  async writeFile(path: string, data: ReadableStream<Uint8Array>, options: { signal?: AbortSignal; sizeBytes?: number }): Promise<void> {
    this.checkNames(path);
    const result = await execWrite(this.container, ["sh", "-c", WRITE_SCRIPT, "sbx-write", path, randomBytes(8).toString("hex")], data, { user: this.user, env: this.environment, signal: options.signal });
    if (result.exitCode === 0) return;
    if (result.exitCode === 45) throw new PathError({ path, reason: "is-a-directory", backend: "docker", message: `Cannot write ${JSON.stringify(path)}: a directory is in the way.` });
    if (result.exitCode === 46) throw new PathError({ path, reason: "not-a-directory", backend: "docker", message: `Cannot write ${JSON.stringify(path)}: ${posix.dirname(path)} is not a directory.` });
    if (result.exitCode === 47) throw this.escapes(path);
    if (result.exitCode === 49 || /no space left/i.test(result.stderr)) throw this.failed("write", path, `no space left in the workspace (nothing was written; free space with files.remove or raise settings.workspaceSizeMiB)`);
    if (/read-only file system/i.test(result.stderr)) throw new PathError({ path, reason: "read-only", backend: "docker", message: `Cannot write ${JSON.stringify(path)}: it is on a read-only mount.` });
    if (/permission denied/i.test(result.stderr)) throw new PathError({ path, reason: "permission-denied", backend: "docker", message: `Cannot write ${JSON.stringify(path)}: the sandbox user may not write there (permission denied).` });
    throw this.failed("write", path, result.stderr || `the write ended with exit code ${result.exitCode}; nothing was written`);
  }

  /** Lists one directory level. */
  async list(path: string, _options: { signal?: AbortSignal }): Promise<FileEntry[]> {
    this.checkNames(path);
    const result = await this.run(LIST_SCRIPT, "sbx-list", [path]);
    if (result.exitCode === 44) throw this.notFound(path);
    if (result.exitCode === 45) throw new PathError({ path, reason: "not-a-directory", backend: "docker", message: `Cannot list ${JSON.stringify(path)}: it is not a directory.` });
    if (result.exitCode === 47) throw this.escapes(path);
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

  /** Describes an entry without following a final symlink. */
  async stat(path: string, _options: { signal?: AbortSignal }): Promise<FileEntry> {
    this.checkNames(path);
    const result = await this.run(STAT_SCRIPT, "sbx-stat", [path]);
    if (result.exitCode === 44) throw this.notFound(path);
    if (result.exitCode === 47) throw this.escapes(path);
    if (result.exitCode !== 0) throw this.failed("stat", path, result.stderr);
    const [typeText = "", sizeText = "0", mtimeText = "0"] = result.stdout.toString("utf8").trim().split("|");
    return { name: posix.basename(path), path, type: entryType(typeText), size: Number(sizeText), modifiedAt: new Date(Number(mtimeText) * 1000) };
  }

  /** Removes a file, or a directory when `recursive`. */
  async remove(path: string, options: { recursive: boolean; signal?: AbortSignal }): Promise<void> {
    this.checkNames(path);
    const result = await this.run(REMOVE_SCRIPT, "sbx-remove", [path, options.recursive ? "recursive" : "single"]);
    if (result.exitCode === 44) throw this.notFound(path);
    if (result.exitCode === 45) throw new PathError({ path, reason: "is-a-directory", backend: "docker", message: `Cannot remove ${JSON.stringify(path)}: it is a directory; pass { recursive: true }.` });
    if (result.exitCode === 47) throw this.escapes(path);
    if (result.exitCode !== 0) throw this.failed("remove", path, result.stderr);
  }

  /** Creates a directory and its parents. */
  async mkdir(path: string, _options: { signal?: AbortSignal }): Promise<void> {
    this.checkNames(path);
    const result = await this.run(MKDIR_SCRIPT, "sbx-mkdir", [path]);
    if (result.exitCode === 46) throw new PathError({ path, reason: "not-a-directory", backend: "docker", message: `Cannot create directory ${JSON.stringify(path)}: a file is in the way.` });
    if (result.exitCode === 47) throw this.escapes(path);
    if (result.exitCode !== 0) {
      if (/not a directory|file exists/i.test(result.stderr)) throw new PathError({ path, reason: "not-a-directory", backend: "docker", message: `Cannot create directory ${JSON.stringify(path)}: a file is in the way.` });
      throw this.failed("create directory", path, result.stderr);
    }
  }

  /** Renames or moves an entry. */
  async rename(from: string, to: string, _options: { signal?: AbortSignal }): Promise<void> {
    this.checkNames(from);
    this.checkNames(to);
    const result = await this.run(RENAME_SCRIPT, "sbx-rename", [from, to]);
    if (result.exitCode === 44) throw this.notFound(from);
    if (result.exitCode === 45) throw new PathError({ path: to, reason: "is-a-directory", backend: "docker", message: `Cannot rename ${JSON.stringify(from)} onto ${JSON.stringify(to)}: a directory is in the way.` });
    if (result.exitCode === 47) throw this.escapes(from);
    if (result.exitCode !== 0) {
      if (/no such file or directory/i.test(result.stderr)) throw this.notFound(posix.dirname(to));
      throw this.failed("rename", from, result.stderr);
    }
  }
}
