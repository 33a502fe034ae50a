import { z } from "zod";

/**
 * Why a `PathError` refused a path: a closed union, the same on every backend (ADR 0020).
 * - `escapes-workspace`: the path, or a symbolic link on it, leads outside the workspace.
 * - `invalid`: empty, too long, a NUL byte, or a name the kernel refuses.
 * - `not-a-regular-file`: `read`/`download` of a FIFO, device or socket.
 * - `is-a-directory`: `read` of a directory, a write onto a directory, `remove` of a directory without `recursive`.
 * - `not-a-directory`: a file stands where a directory is needed (a parent, `list`, `mkdir`).
 * - `not-empty`: reserved for a backend that can only remove empty directories.
 * - `exists`: the target exists and the operation does not replace it.
 * - `read-only`: the path is on a read-only mount (or a read-only file system).
 * - `permission-denied`: the sandbox user may not access it.
 */
export const pathErrorReasonSchema = z.enum([
  "escapes-workspace",
  "invalid",
  "not-a-regular-file",
  "is-a-directory",
  "not-a-directory",
  "not-empty",
  "exists",
  "read-only",
  "permission-denied",
]);

/** Why a `PathError` refused a path (see `pathErrorReasonSchema`). */
export type PathErrorReason = z.infer<typeof pathErrorReasonSchema>;
