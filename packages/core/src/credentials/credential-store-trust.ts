import { constants, type Stats } from "node:fs";
import { chmod, lstat, mkdir, open, stat } from "node:fs/promises";
import { dirname, join } from "node:path";
import { CredentialStoreUnsafeError } from "../errors/index.js";

/** Write permission for group or others. */
const WRITABLE_BY_OTHERS = 0o022;
/** Any permission for group or others. */
const ANY_ACCESS_BY_OTHERS = 0o077;
/** The sticky bit: in a shared folder only an entry's owner may rename or remove it (as in /tmp). */
const STICKY = 0o1000;

/** The caller's uid, or null where the platform has none (Windows: ownership is not checked there). */
function callerUid(): number | null {
  return typeof process.getuid === "function" ? process.getuid() : null;
}

/**
 * Why the state folder (the credential store's parent) lets someone else swap the store, or null when it does not: it
 * must belong to the caller or root, and be writable by no one else unless it has the sticky bit.
 */
function untrustedParentReason(parent: Stats, uid: number): string | null {
  if (!parent.isDirectory()) return "has a parent that is not a directory";
  if (parent.uid !== uid && parent.uid !== 0) return `has a parent folder owned by uid ${parent.uid}, not ${uid}, who could replace it`;
  if ((parent.mode & WRITABLE_BY_OTHERS) !== 0 && (parent.mode & STICKY) === 0)
    return `has a parent folder others can write (mode ${(parent.mode & 0o7777).toString(8)}), so they could replace it`;
  return null;
}

/** Why the store folder itself is not the caller's alone, or null when it is (found with `lstat`: a link is never followed). */
function untrustedFolderReason(folder: Stats, uid: number): string | null {
  if (folder.isSymbolicLink()) return "is a symbolic link";
  if (!folder.isDirectory()) return "is not a directory";
  if (folder.uid !== uid) return `is owned by uid ${folder.uid}, not ${uid}`;
  if ((folder.mode & WRITABLE_BY_OTHERS) !== 0) return `can be written by others (mode ${(folder.mode & 0o7777).toString(8)})`;
  return null;
}

/**
 * Checks that the credential store `folder` is the caller's alone: not a symbolic link, owned by the caller, writable
 * by no one else, in a parent no one else can swap it in. With `create`, makes it first (mode 0700, parents 0700); a
 * folder that is the caller's but readable by others is tightened to 0700. Returns false when it does not exist and
 * `create` is off. Throws `CredentialStoreUnsafeError` otherwise, so nothing is written to or trusted from it.
 */
export async function ensureTrustedStore(folder: string, options: { create: boolean }): Promise<boolean> {
  const uid = callerUid();
  if (options.create) {
    await mkdir(dirname(folder), { recursive: true, mode: 0o700 });
    await mkdir(folder, { mode: 0o700 }).catch((error: NodeJS.ErrnoException) => {
      if (error.code !== "EEXIST") throw error;
    });
  }
  let found: Stats;
  try {
    found = await lstat(folder);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT" && !options.create) return false;
    throw error;
  }
  if (uid === null) return true;
  const reason = untrustedParentReason(await stat(dirname(folder)), uid) ?? untrustedFolderReason(found, uid);
  if (reason !== null) throw new CredentialStoreUnsafeError({ path: folder, reason });
  if ((found.mode & ANY_ACCESS_BY_OTHERS) !== 0) await chmod(folder, 0o700);
  return true;
}

/** One record file read without following links: its text, or why it is not trusted, or gone. */
export type TrustedRead =
  { readonly kind: "text"; readonly text: string } | { readonly kind: "untrusted"; readonly reason: string } | { readonly kind: "gone" };

/**
 * Reads a record file with `O_NOFOLLOW` and checks the opened file itself (`fstat`): a regular file owned by the
 * caller that no one else can write. A symbolic link, another user's file or a world-writable one is `untrusted`:
 * its contents are never parsed, so a planted handle never reaches `revoke`.
 */
export async function readTrustedRecordFile(folder: string, fileName: string): Promise<TrustedRead> {
  let handle;
  try {
    handle = await open(join(folder, fileName), constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOENT") return { kind: "gone" };
    if (code === "ELOOP") return { kind: "untrusted", reason: "is a symbolic link" };
    throw error;
  }
  try {
    const found = await handle.stat();
    const uid = callerUid();
    if (!found.isFile()) return { kind: "untrusted", reason: "is not a regular file" };
    if (uid !== null && found.uid !== uid) return { kind: "untrusted", reason: `is owned by uid ${found.uid}, not ${uid}` };
    if ((found.mode & WRITABLE_BY_OTHERS) !== 0)
      return { kind: "untrusted", reason: `can be written by others (mode ${(found.mode & 0o7777).toString(8)})` };
    return { kind: "text", text: await handle.readFile("utf8") };
  } finally {
    await handle.close();
  }
}
