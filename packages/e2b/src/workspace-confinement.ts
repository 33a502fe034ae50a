import { PathError } from "@sbx/core";

/**
 * Symlink confinement for envd's filesystem API. envd runs as root and does every file operation as root
 * (e2b-dev/infra packages/envd: `os.Open`, `os.OpenFile`, `os.RemoveAll`, `os.Rename`, `filepath.WalkDir`),
 * following symlinks on the way, so a symlink planted by sandboxed code (`ln -s /etc etc-dir`) would let a
 * read of `etc-dir/shadow` or a write to `etc-dir/x` reach outside the workspace with root's rights. Before
 * such an operation the adapter stats the path's ancestors below the workspace (in parallel, one round trip)
 * and, where the operation follows it, the path itself, and refuses any symlink whose resolved target is
 * outside the workspace. envd reports a symlink with its fully resolved target (`symlinkTarget`, from
 * `filepath.EvalSymlinks`) and the type of what it points to.
 *
 * What this cannot close: sandboxed code that swaps a directory for a symlink between the check and envd's
 * operation (a race). Real E2B templates give the sandbox user passwordless sudo, so on E2B the sandbox user
 * can already do as root what such a race would allow.
 */

/** The part of envd's `EntryInfo` (as the SDK returns it) that confinement reads. */
export interface ConfinementEntry {
  readonly type?: string;
  readonly symlinkTarget?: string;
}

/** Stats a path; resolves `undefined` when it does not exist. */
export type StatPath = (path: string) => Promise<ConfinementEntry | undefined>;

function parentOf(path: string): string {
  const index = path.lastIndexOf("/");
  return index <= 0 ? "/" : path.slice(0, index);
}

/** Normalises an absolute path (`.`/`..`/double slashes); `undefined` when `..` climbs above `/`. */
export function normalisePath(path: string): string | undefined {
  const segments: string[] = [];
  for (const segment of path.split("/")) {
    if (segment === "" || segment === ".") continue;
    if (segment === "..") {
      if (segments.length === 0) return undefined;
      segments.pop();
    } else segments.push(segment);
  }
  return "/" + segments.join("/");
}

/** True when `path` is `root` or below it. */
export function isInside(path: string, root: string): boolean {
  return path === root || path.startsWith(`${root}/`);
}

/** Where a symlink entry at `path` leads (absolute, normalised), or `undefined` when the entry is not a symlink. */
export function symlinkDestination(path: string, entry: ConfinementEntry): string | undefined {
  if (!entry.symlinkTarget) return undefined;
  const target = entry.symlinkTarget.startsWith("/") ? entry.symlinkTarget : `${parentOf(path)}/${entry.symlinkTarget}`;
  return normalisePath(target) ?? "/";
}

/** The ancestors of `path` strictly below `workspace` and strictly above `path`, shallowest first. */
export function ancestorsBelow(path: string, workspace: string): string[] {
  const ancestors: string[] = [];
  for (let current = parentOf(path); isInside(current, workspace) && current !== workspace; current = parentOf(current)) {
    ancestors.unshift(current);
  }
  return ancestors;
}

function escapeError(path: string, through: string, destination: string): PathError {
  return new PathError({
    backend: "e2b",
    path,
    reason: "escapes-workspace",
    message: `Refused path ${JSON.stringify(path)}: ${through === path ? "it is" : `${JSON.stringify(through)} is`} a symlink leading outside the workspace (to ${JSON.stringify(destination)}); envd would follow it as root.`,
  });
}

/**
 * Refuses `path` when one of its ancestors below `workspace` (and, with `includeSelf`, the path itself) is a
 * symlink leading outside the workspace. Missing entries are fine (nothing to follow). Returns the entry of the
 * path itself when `includeSelf` was asked and it exists.
 */
export async function confineToWorkspace(
  path: string,
  workspace: string,
  stat: StatPath,
  options: { includeSelf: boolean },
): Promise<ConfinementEntry | undefined> {
  const checked = ancestorsBelow(path, workspace);
  if (options.includeSelf) checked.push(path);
  const entries = await Promise.all(checked.map((candidate) => stat(candidate)));
  for (const [index, entry] of entries.entries()) {
    if (!entry) continue;
    const destination = symlinkDestination(checked[index]!, entry);
    if (destination !== undefined && !isInside(destination, workspace)) throw escapeError(path, checked[index]!, destination);
  }
  return options.includeSelf ? entries[entries.length - 1] : undefined;
}
