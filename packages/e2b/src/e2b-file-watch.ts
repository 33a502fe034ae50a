/**
 * File watching on E2B (`FILE_WATCH`, ADR 0054): the SDK's `files.watchDir` (envd's `WatchDir`, fsnotify on inotify
 * inside the sandbox), mapped to sbx's events with what envd can tell truthfully:
 * - envd reports a rename as a `rename` of the old name and a `create` of the new one with nothing pairing them (no
 *   inotify cookie reaches the client), so they are given as a `remove` of the old path and a `create` of the new
 *   one, what a move out of and into the tree is: never a guessed `rename { from }` (a declared difference).
 * - `isDirectory` comes from envd's entry info (create, write); a remove carries none, so it is true for a directory
 *   this watch saw (created, or written), false otherwise.
 * - `chmod` has no sbx event and is dropped; the watched directory's own removal ends the watch with
 *   `FileNotFoundError`; envd ends the stream when the kernel's queue overflowed: that becomes an `"overflow"` marker
 *   (`dropped: null`) and the watch is placed again.
 * Confinement: envd runs as root and follows links, so the path is checked first with core's race-free helper (a link
 * out of the workspace is `PathError`, a file `not-a-directory`), and again once the watch is in place.
 */
import { FileNotFoundError, PathError, ProviderError } from "@sbx/core";
import type { DriverFileWatch, WatchFilesRequest } from "@sbx/core/adapter";
import type { FilesystemEvent, Sandbox, WatchHandle } from "e2b";

/** What watching needs from the driver. */
export interface E2BWatchContext {
  /** The SDK sandbox. */
  readonly sandbox: Pick<Sandbox, "files">;
  /** The Linux user the watch is asked as. */
  readonly user: "root" | undefined;
  /** Bounds establishing each watch, in milliseconds, when set. */
  readonly requestTimeoutMs: number | undefined;
  /** The connect deadline given to the long-running stream (the SDK's default would end it after 60 s). */
  readonly streamDeadlineMs: number;
  /** The type of `path` after following links, confined to the workspace (core's helper; throws PathError/FileNotFoundError). */
  confinedType(path: string, signal: AbortSignal): Promise<string>;
  /** Maps an SDK error to core's. */
  failure(error: unknown, operation: string, path?: string): Error;
}

/** Refuses anything but a directory inside the workspace. */
async function requireConfinedDirectory(context: E2BWatchContext, path: string, signal: AbortSignal): Promise<void> {
  const type = await context.confinedType(path, signal);
  if (type !== "directory") {
    throw new PathError({ path, backend: "e2b", reason: "not-a-directory", message: `Cannot watch ${JSON.stringify(path)}: it is not a directory.` });
  }
}

/** Starts a watch of `request.path`; resolves once envd placed it. */
export async function watchE2BDirectory(context: E2BWatchContext, request: WatchFilesRequest): Promise<DriverFileWatch> {
  const root = request.path;
  const directories = new Set<string>();
  let stopped = false;
  let ended = false;
  let handle: WatchHandle | undefined;
  const end = (error: Error) => {
    if (stopped || ended) return;
    ended = true;
    void handle?.stop();
    request.onEnd(error);
  };
  const onEvent = (event: FilesystemEvent) => {
    if (stopped || ended) return;
    // The SDK's enums hold these strings ("create", "dir", …); compared as text.
    const type: string = event.type;
    const entryType: string | undefined = event.entry?.type;
    const path = event.name === "." || event.name === "" ? root : `${root}/${event.name}`;
    if (path === root) {
      if (type === "remove" || type === "rename")
        end(new FileNotFoundError({ path: root, backend: "e2b", message: `The watched directory ${root} was removed or moved away.` }));
      return;
    }
    if (type === "create" || type === "write") {
      const isDirectory = entryType !== undefined ? entryType === "dir" : directories.has(path);
      if (isDirectory) directories.add(path);
      request.onEvent({ type, path, isDirectory });
      return;
    }
    if (type === "remove" || type === "rename") {
      const isDirectory = directories.has(path);
      if (isDirectory) for (const known of directories) if (known === path || known.startsWith(`${path}/`)) directories.delete(known);
      request.onEvent({ type: "remove", path, isDirectory });
    }
  };
  const place = async (signal: AbortSignal): Promise<WatchHandle> => {
    try {
      return await context.sandbox.files.watchDir(root, onEvent, {
        recursive: request.recursive,
        includeEntry: true,
        user: context.user,
        requestTimeoutMs: context.requestTimeoutMs,
        timeoutMs: context.streamDeadlineMs,
        signal,
        onExit: (error) => {
          if (stopped || ended) return;
          if (error && /overflow/i.test(error instanceof Error ? error.message : String(error))) {
            request.onEvent({ type: "overflow", path: root, isDirectory: false, dropped: null });
            void replace();
            return;
          }
          end(
            error
              ? context.failure(error, "watch files", root)
              : new ProviderError({ backend: "e2b", message: `envd ended the watch of ${root} without saying why.` }),
          );
        },
      });
    } catch (error) {
      throw context.failure(error, "watch files", root);
    }
  };
  /** After the kernel's queue overflowed (envd ended the stream), the watch is placed again; events in between are behind the marker. */
  const replace = async () => {
    try {
      handle = await place(new AbortController().signal);
      if (stopped || ended) void handle.stop();
    } catch (error) {
      end(error instanceof Error ? error : new Error(String(error)));
    }
  };
  await requireConfinedDirectory(context, root, request.signal);
  handle = await place(request.signal);
  try {
    // A link swapped in while the watch was being placed: the path no longer leads to a directory inside.
    await requireConfinedDirectory(context, root, request.signal);
  } catch (error) {
    stopped = true;
    await handle.stop();
    throw error;
  }
  return {
    stop: async () => {
      stopped = true;
      await handle?.stop();
    },
  };
}
