import type { FileWatchEvent } from "@sbx/core";
import { describe, expect, it } from "vitest";
import { watchE2BDirectory, type E2BWatchContext } from "../src/e2b-file-watch.js";

/** What the stub SDK's `watchDir` was called with, and a way to send events and end the stream. */
interface PlacedWatch {
  path: string;
  onEvent: (event: { name: string; type: string; entry?: { type: string } }) => void;
  onExit: (error?: Error) => void;
  stopped: boolean;
}

/** A context whose SDK records each watch placed (no sandbox: the mapping is what is under test). */
function stubContext(confinedType = "directory"): { context: E2BWatchContext; placed: PlacedWatch[] } {
  const placed: PlacedWatch[] = [];
  const files = {
    watchDir: (path: string, onEvent: PlacedWatch["onEvent"], options: { onExit: PlacedWatch["onExit"] }) => {
      const watch: PlacedWatch = { path, onEvent, onExit: options.onExit, stopped: false };
      placed.push(watch);
      return Promise.resolve({
        stop: () => {
          watch.stopped = true;
          return Promise.resolve();
        },
      });
    },
  };
  const context = {
    sandbox: { files },
    user: undefined,
    requestTimeoutMs: undefined,
    streamDeadlineMs: 1_000,
    confinedType: () => Promise.resolve(confinedType),
    failure: (error: unknown) => (error instanceof Error ? error : new Error(String(error))),
  } as unknown as E2BWatchContext;
  return { context, placed };
}

function collector() {
  const events: FileWatchEvent[] = [];
  const ends: Error[] = [];
  return {
    events,
    ends,
    request: (path: string) => ({
      path,
      recursive: true,
      signal: new AbortController().signal,
      onEvent: (event: FileWatchEvent) => void events.push(event),
      onEnd: (error: Error) => void ends.push(error),
    }),
  };
}

describe("E2B watch events mapped to sbx's (ADR 0054)", () => {
  it("a rename is a remove of the old path and a create of the new; isDirectory from entries, and for a remove from what the watch saw", async () => {
    const { context, placed } = stubContext();
    const { events, ends, request } = collector();
    await watchE2BDirectory(context, request("/home/user/w"));
    const watch = placed[0]!;
    watch.onEvent({ name: "sub", type: "create", entry: { type: "dir" } });
    watch.onEvent({ name: "a.txt", type: "create", entry: { type: "file" } });
    watch.onEvent({ name: "a.txt", type: "chmod", entry: { type: "file" } });
    watch.onEvent({ name: "a.txt", type: "rename" });
    watch.onEvent({ name: "b.txt", type: "create", entry: { type: "file" } });
    watch.onEvent({ name: "sub", type: "remove" });
    watch.onEvent({ name: "old-dir", type: "remove" });
    expect(events).toEqual([
      { type: "create", path: "/home/user/w/sub", isDirectory: true },
      { type: "create", path: "/home/user/w/a.txt", isDirectory: false },
      { type: "remove", path: "/home/user/w/a.txt", isDirectory: false },
      { type: "create", path: "/home/user/w/b.txt", isDirectory: false },
      { type: "remove", path: "/home/user/w/sub", isDirectory: true },
      { type: "remove", path: "/home/user/w/old-dir", isDirectory: false },
    ]);
    expect(ends).toEqual([]);
  });

  it("the kernel's queue overflowing (envd ends the stream) gives one overflow marker with dropped null and places the watch again", async () => {
    const { context, placed } = stubContext();
    const { events, ends, request } = collector();
    await watchE2BDirectory(context, request("/home/user/w"));
    placed[0]!.onExit(new Error("[internal] watcher error: fsnotify: queue or buffer overflow"));
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(events).toEqual([{ type: "overflow", path: "/home/user/w", isDirectory: false, dropped: null }]);
    expect(placed).toHaveLength(2);
    placed[1]!.onEvent({ name: "later", type: "create", entry: { type: "file" } });
    expect(events.at(-1)).toEqual({ type: "create", path: "/home/user/w/later", isDirectory: false });
    expect(ends).toEqual([]);
  });

  it("the watched directory's removal ends the watch with FileNotFoundError; another stream error ends it with that error; stop() ends nothing", async () => {
    const { context, placed } = stubContext();
    const first = collector();
    await watchE2BDirectory(context, first.request("/home/user/w"));
    placed[0]!.onEvent({ name: ".", type: "remove" });
    expect(first.ends.map((error) => (error as { code?: string }).code)).toEqual(["SBX_FILE_NOT_FOUND"]);
    expect(placed[0]!.stopped).toBe(true);
    const second = collector();
    await watchE2BDirectory(context, second.request("/home/user/v"));
    placed[1]!.onExit(new Error("the connection broke"));
    expect(second.ends.map((error) => error.message)).toEqual(["the connection broke"]);
    const third = collector();
    const watch = await watchE2BDirectory(context, third.request("/home/user/u"));
    await watch.stop();
    placed[2]!.onExit(new Error("canceled"));
    expect(third.ends).toEqual([]);
  });

  it("a path that is not a directory is refused before any watch is placed", async () => {
    const { context, placed } = stubContext("file");
    const { request } = collector();
    await expect(watchE2BDirectory(context, request("/home/user/plain.txt"))).rejects.toMatchObject({ code: "SBX_PATH", reason: "not-a-directory" });
    expect(placed).toHaveLength(0);
  });
});
