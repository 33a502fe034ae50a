import { PathError } from "../errors/index.js";

/** Longest path accepted, in characters (Linux PATH_MAX). */
const MAX_PATH_LENGTH = 4096;

/**
 * Resolves a caller's path against the workspace and confines it there. Relative paths are taken from the
 * workspace; absolute ones must lie inside it. Any `..` segment, NUL byte, or path outside the workspace is a
 * `PathError`, raised before anything reaches the backend.
 * @returns an absolute, normalised path inside `workspace` (or `workspace` itself).
 */
export function resolveWorkspacePath(path: unknown, workspace: string, backend?: string): string {
  if (typeof path !== "string" || path.length === 0) {
    throw new PathError({ path: String(path), reason: "invalid", backend, message: "A sandbox path must be a non-empty string." });
  }
  if (path.length > MAX_PATH_LENGTH)
    throw new PathError({
      path: path.slice(0, 64) + "…",
      reason: "invalid",
      backend,
      message: `A sandbox path may be at most ${MAX_PATH_LENGTH} characters.`,
    });
  if (path.includes("\0")) throw new PathError({ path, reason: "invalid", backend, message: "A sandbox path may not contain NUL bytes." });
  const joined = path.startsWith("/") ? path : `${workspace}/${path}`;
  const segments: string[] = [];
  for (const segment of joined.split("/")) {
    if (segment === "" || segment === ".") continue;
    if (segment === "..") {
      throw new PathError({
        path,
        reason: "escapes-workspace",
        backend,
        message: `Refused path ${JSON.stringify(path)}: '..' segments are not allowed; paths must stay inside the workspace ${workspace}.`,
      });
    }
    segments.push(segment);
  }
  const normalised = "/" + segments.join("/");
  if (normalised !== workspace && !normalised.startsWith(workspace === "/" ? "/" : `${workspace}/`)) {
    throw new PathError({
      path,
      reason: "escapes-workspace",
      backend,
      message: `Refused path ${JSON.stringify(path)}: it is outside the workspace ${workspace}. The files API is confined to the workspace; use commands for anything else.`,
    });
  }
  return normalised;
}

/** Resolves a command working directory: relative to the workspace, or any absolute path without NUL bytes. */
export function resolveWorkingDirectory(cwd: string | undefined, workspace: string, backend?: string): string {
  if (cwd === undefined) return workspace;
  if (cwd.includes("\0")) throw new PathError({ path: cwd, reason: "invalid", backend, message: "A working directory may not contain NUL bytes." });
  return cwd.startsWith("/") ? cwd : `${workspace}/${cwd}`;
}
