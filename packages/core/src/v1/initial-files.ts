import { z } from "zod";

/**
 * Most files `createSandbox({ files })` writes. Default bound, not configurable: every file is one write through the
 * driver before `createSandbox` resolves, so a list without end would hold creation (and the backend's sandbox) open.
 */
export const MAX_INITIAL_FILES = 1_000;

/**
 * Most bytes, all files together, `createSandbox({ files })` writes (64 MiB, the whole-read default of `files.read`).
 * The contents are held in the caller's memory already; the bound keeps creation from turning into a bulk transfer:
 * copy more with `files.upload` or `files.write` streams once the sandbox exists.
 */
export const MAX_INITIAL_FILES_BYTES = 64 * 1024 * 1024;

/** One file written into a new sandbox before `createSandbox` resolves. */
export const initialFileSchema = z
  .object({
    /** Relative to the workspace, or absolute inside it; confined like every file call (a path out is `PathError`). */
    path: z
      .string()
      .min(1)
      .max(4096)
      .refine((value) => !value.includes("\0"), "must not contain NUL"),
    /** The file's content: text (written as UTF-8) or bytes. */
    content: z.union([z.string(), z.instanceof(Uint8Array)]),
  })
  .strict();

/** The UTF-8 size of one initial file's content. */
export function initialFileBytes(file: { readonly content: string | Uint8Array }): number {
  return typeof file.content === "string" ? Buffer.byteLength(file.content, "utf8") : file.content.byteLength;
}

/** The `files` create option: at most `MAX_INITIAL_FILES` files, `MAX_INITIAL_FILES_BYTES` in all, each path once. */
export const initialFilesSchema = z
  .array(initialFileSchema)
  .max(MAX_INITIAL_FILES, `at most ${MAX_INITIAL_FILES} files`)
  .superRefine((files, context) => {
    const total = files.reduce((sum, file) => sum + initialFileBytes(file), 0);
    if (total > MAX_INITIAL_FILES_BYTES)
      context.addIssue({
        code: "custom",
        message: `the files hold ${total} bytes, over the ${MAX_INITIAL_FILES_BYTES}-byte limit of initial files; write larger content with files.write or files.upload once the sandbox exists`,
      });
    const seen = new Set<string>();
    files.forEach((file, index) => {
      if (seen.has(file.path)) context.addIssue({ code: "custom", path: [index, "path"], message: `${JSON.stringify(file.path)} is given twice` });
      seen.add(file.path);
    });
  });

/** A file written into a new sandbox at create (see `CreateSandboxOptions.files`). */
export interface InitialFile {
  /** Relative to the workspace, or absolute inside it. Parent folders are created. */
  path: string;
  /** Text (written as UTF-8) or bytes. */
  content: string | Uint8Array;
}
