import { PathError } from "../errors/index.js";
import { encodeNameBytes } from "../posix/name-bytes.js";

/** Longest path accepted, in characters (Linux PATH_MAX). */
const MAX_PATH_LENGTH = 4096;

/** Longest single name (path segment) Linux accepts (NAME_MAX), in bytes. */
export const MAX_NAME_BYTES = 255;

/** A segment of at most this many UTF-16 units cannot exceed `MAX_NAME_BYTES` (one unit is at most 3 bytes). */
const SHORT_NAME_UNITS = Math.floor(MAX_NAME_BYTES / 3);

/** Refuses a segment the kernel would refuse (over 255 bytes, counted as the bytes the name stands for: ADR 0031). */
function checkNameLength(path: string, segment: string, backend: string | undefined): void {
  if (segment.length <= SHORT_NAME_UNITS) return;
  const bytes = encodeNameBytes(segment).byteLength;
  if (bytes <= MAX_NAME_BYTES) return;
  throw new PathError({
    path: path.length > 80 ? `${path.slice(0, 80)}…` : path,
    reason: "invalid",
    backend,
    message: `Refused path: the name ${JSON.stringify(segment.slice(0, 32) + "…")} is ${bytes} bytes long; Linux allows at most ${MAX_NAME_BYTES} bytes per name.`,
  });
}

/**
 * Resolves a caller's path against the workspace and confines it there. Relative paths are taken from the
 * workspace; absolute ones must lie inside it. Any `..` segment, NUL byte, path outside the workspace, path over
 * 4096 characters (PATH_MAX) or name over 255 bytes (NAME_MAX) is a `PathError`, raised before anything reaches the
 * backend (so every backend refuses the same paths, whatever its own kernel or API would do).
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
    checkNameLength(path, segment, backend);
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
