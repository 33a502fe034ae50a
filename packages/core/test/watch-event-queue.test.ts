import { describe, expect, it } from "vitest";
import { WatchEventQueue } from "../src/limits/watch-event-queue.ts";
import type { FileWatchEvent } from "../src/index.ts";

const created = (name: string): FileWatchEvent => ({ type: "create", path: `/w/${name}`, isDirectory: false });

async function drain(queue: WatchEventQueue): Promise<FileWatchEvent[]> {
  const events: FileWatchEvent[] = [];
  for (;;) {
    const next = await queue.next();
    if (next.done) return events;
    events.push(next.value);
  }
}

describe("WatchEventQueue (ADR 0049)", () => {
  it("delivers events in order and ends normally after finish()", async () => {
    const queue = new WatchEventQueue("/w", 10);
    queue.push(created("a"));
    queue.push({ type: "rename", path: "/w/b", from: "/w/a", isDirectory: false });
    queue.finish();
    expect(await drain(queue)).toEqual([created("a"), { type: "rename", path: "/w/b", from: "/w/a", isDirectory: false }]);
  });

  it("coalesces consecutive writes to one path, not writes to different paths", async () => {
    const queue = new WatchEventQueue("/w", 10);
    for (const path of ["/w/a", "/w/a", "/w/a", "/w/b", "/w/a"]) queue.push({ type: "write", path, isDirectory: false });
    queue.finish();
    expect((await drain(queue)).map((event) => event.path)).toEqual(["/w/a", "/w/b", "/w/a"]);
  });

  it("holds a burst of a million events to the bound, with one marker counting every dropped event, then delivers later events", async () => {
    const queue = new WatchEventQueue("/w", 100);
    for (let index = 0; index < 1_000_000; index++) queue.push(created(`f${index}`));
    const kept: FileWatchEvent[] = [];
    for (let index = 0; index < 100; index++) kept.push((await queue.next()).value as FileWatchEvent);
    expect(kept.every((event) => event.type === "create")).toBe(true);
    const marker = (await queue.next()).value as FileWatchEvent;
    expect(marker).toEqual({ type: "overflow", path: "/w", isDirectory: false, dropped: 999_900 });
    queue.push(created("later"));
    queue.finish();
    expect(await drain(queue)).toEqual([created("later")]);
  });

  it("merges a backend's own overflow (count unknown) into the marker as null", async () => {
    const queue = new WatchEventQueue("/w", 1);
    queue.push(created("a"));
    queue.push(created("b"));
    queue.push({ type: "overflow", path: "/w", isDirectory: false, dropped: null });
    queue.finish();
    expect(await drain(queue)).toEqual([created("a"), { type: "overflow", path: "/w", isDirectory: false, dropped: null }]);
  });

  it("wakes a waiting reader, and rejects it with the error that ended the watch after the buffered events", async () => {
    const queue = new WatchEventQueue("/w", 10);
    const waiting = queue.next();
    queue.push(created("a"));
    expect(await waiting).toEqual({ value: created("a"), done: false });
    queue.push(created("b"));
    queue.finish(new Error("gone"));
    expect(await queue.next()).toEqual({ value: created("b"), done: false });
    await expect(queue.next()).rejects.toThrow("gone");
  });
});
