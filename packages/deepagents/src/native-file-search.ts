import { posix } from "node:path";
import { isSbxError, type FileEntry, type Sandbox } from "@sbx/core";
import { applyGrepMaxCount, type FileInfo, type GlobResult, type GrepMatch, type GrepResult, type LsResult } from "deepagents";
import { describeFileError } from "./file-errors.js";
import { globPattern } from "./glob-pattern.js";

/**
 * Most entries a recursive walk visits before it stops and says `truncated` (deepagents' shell glob stops its `find`
 * at 50 000 lines for the same reason: a listing of a huge tree must not fill the host's memory).
 */
export const MAX_WALK_ENTRIES = 50_000;

/**
 * Reads a file for grep: its text; `skip` for a file deepagents treats as binary (by its MIME type) or one that went
 * away during the search; `too-large` for one over the read limit (the search then says it is incomplete).
 */
export type TextReader = (path: string) => Promise<{ text: string } | { skipped: "skip" | "too-large" }>;

function fileInfo(entry: FileEntry, path: string): FileInfo {
  const isDirectory = entry.type === "directory";
  return {
    path: isDirectory ? `${path}/` : path,
    is_dir: isDirectory,
    size: entry.size,
    ...(entry.modifiedAt ? { modified_at: entry.modifiedAt.toISOString() } : {}),
  };
}

/** The absolute sandbox path of `path` (relative paths are relative to the workspace), without a trailing slash. */
function absolute(sandbox: Sandbox, path: string): string {
  const joined = path.startsWith("/") ? path : `${sandbox.workspace}/${path}`;
  const normalized = posix.normalize(joined);
  return normalized.length > 1 && normalized.endsWith("/") ? normalized.slice(0, -1) : normalized;
}

/** An error text for a path the file API refused, naming the workspace when the path lies outside it. */
function refusal(sandbox: Sandbox, operation: string, path: string, error: unknown): string {
  if (isSbxError(error, "SBX_PATH") && (error as { reason?: string }).reason === "escapes-workspace")
    return `Error: cannot ${operation} ${JSON.stringify(path)}: on this sandbox (${sandbox.backend}) files are reachable only under the workspace ${sandbox.workspace}; use ${sandbox.workspace} or a path under it.`;
  return `Error: cannot ${operation} ${JSON.stringify(path)}: ${describeFileError(error) ?? String(error)}`;
}

/** Runs a file-API call; a path error becomes `{ error }`, anything else is thrown. */
async function orRefusal<Value>(sandbox: Sandbox, operation: string, path: string, work: () => Promise<Value>): Promise<Value | { error: string }> {
  try {
    return await work();
  } catch (error) {
    if (describeFileError(error) === undefined) throw error;
    return { error: refusal(sandbox, operation, path, error) };
  }
}

function isRefusal(value: unknown): value is { error: string } {
  return typeof value === "object" && value !== null && "error" in value && !Array.isArray(value);
}

/**
 * Every entry under `root` (not `root` itself), breadth first, at most `MAX_WALK_ENTRIES`. Symbolic links are
 * listed, not followed: sbx's `files.stat` does not follow links yet (issue 21), so a link's target type is unknown.
 */
async function walk(sandbox: Sandbox, root: string): Promise<{ entries: FileEntry[]; truncated: boolean }> {
  const entries: FileEntry[] = [];
  const folders = [root];
  while (folders.length > 0) {
    const folder = folders.shift()!;
    let listed: FileEntry[];
    try {
      listed = await sandbox.files.list(folder);
    } catch (error) {
      // A folder removed or made unreadable during the walk is skipped, as `find` skips it; the root is checked by the caller.
      if (folder !== root && describeFileError(error) !== undefined) continue;
      throw error;
    }
    for (const entry of listed) {
      if (entries.length >= MAX_WALK_ENTRIES) return { entries, truncated: true };
      entries.push(entry);
      if (entry.type === "directory") folders.push(entry.path);
    }
  }
  return { entries, truncated: false };
}

/** deepagents' `ls` through the file API: one level, directories with a trailing `/`. */
export async function listNatively(sandbox: Sandbox, path: string): Promise<LsResult> {
  const listed = await orRefusal(sandbox, "list", path, () => sandbox.files.list(path));
  if (isRefusal(listed)) return listed;
  const base = absolute(sandbox, path);
  return { files: listed.map((entry) => fileInfo(entry, base === "/" ? `/${entry.name}` : `${base}/${entry.name}`)) };
}

/** deepagents' `glob` through the file API: paths relative to `path`, matched with deepagents' glob meanings. */
export async function globNatively(sandbox: Sandbox, pattern: string, path: string): Promise<GlobResult> {
  let matcher: RegExp;
  try {
    matcher = globPattern(pattern);
  } catch {
    return { error: `Error: ${JSON.stringify(pattern)} is not a glob pattern this backend can read.` };
  }
  const base = absolute(sandbox, path);
  const walked = await orRefusal(sandbox, "search", path, () => walk(sandbox, base));
  if (isRefusal(walked)) return walked;
  const files: FileInfo[] = [];
  for (const entry of walked.entries) {
    const relative = entry.path.startsWith(`${base}/`) ? entry.path.slice(base.length + 1) : entry.path;
    if (matcher.test(relative)) files.push(fileInfo(entry, relative));
  }
  return { files, truncated: walked.truncated };
}

/**
 * deepagents' `grep` through the file API: a literal (not regular-expression) search of every text file under
 * `path` (or of `path` itself when it is a file), optionally only files whose name matches `glob`. Binary files, by
 * deepagents' MIME rules, are skipped as its shell grep skips them.
 */
export async function grepNatively(
  sandbox: Sandbox,
  readText: TextReader,
  search: { pattern: string; path: string; glob: string | null; maxCount: number | null },
): Promise<GrepResult> {
  let nameMatcher: RegExp | null = null;
  try {
    nameMatcher = search.glob ? globPattern(search.glob) : null;
  } catch {
    return { error: `Error: ${JSON.stringify(search.glob)} is not a glob pattern this backend can read.` };
  }
  const root = await orRefusal(sandbox, "search", search.path, () => sandbox.files.stat(search.path));
  if (isRefusal(root)) return root;
  const base = absolute(sandbox, search.path);
  let files: string[];
  let truncated = false;
  if (root.type === "directory") {
    const walked = await walk(sandbox, base);
    truncated = walked.truncated;
    files = walked.entries
      .filter((entry) => entry.type === "file" && (nameMatcher === null || nameMatcher.test(entry.name)))
      .map((entry) => entry.path);
  } else {
    files = root.type === "file" && (nameMatcher === null || nameMatcher.test(root.name)) ? [base] : [];
  }
  const matches: GrepMatch[] = [];
  for (const file of files) {
    const read = await readText(file);
    if ("skipped" in read) {
      if (read.skipped === "too-large") truncated = true;
      continue;
    }
    const lines = read.text.split("\n");
    if (read.text.endsWith("\n")) lines.pop();
    lines.forEach((line, index) => {
      if (line.includes(search.pattern)) matches.push({ path: file, line: index + 1, text: line });
    });
    if (search.maxCount !== null && matches.length > search.maxCount) break;
  }
  return applyGrepMaxCount({ result: { matches, ...(truncated ? { truncated } : {}) }, maxCount: search.maxCount });
}
