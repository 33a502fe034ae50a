import { describe, expect, it } from "vitest";
import { DEFAULT_OUTPUT_LIMIT_BYTES } from "../src/index.ts";
import { OutputCollector, TextChannel } from "../src/limits/output-collector.ts";

const bytes = (text: string) => new TextEncoder().encode(text);

describe("OutputCollector", () => {
  it.each([
    ["cap - 1", 9, false],
    ["cap", 10, false],
    ["cap + 1", 11, true],
  ])("%s bytes against a 10-byte cap: truncated is %s, kept bytes never exceed the cap, every byte is counted", (_label, size, truncated) => {
    const collector = new OutputCollector(10);
    collector.push(bytes("x".repeat(size as number)));
    expect(collector.truncated).toBe(truncated);
    expect(collector.bytes().byteLength).toBe(Math.min(size as number, 10));
    expect(collector.totalBytes).toBe(size);
    expect(collector.text()).toBe("x".repeat(Math.min(size as number, 10)));
  });

  it("a cap reached across many chunks keeps exactly the first cap bytes", () => {
    const collector = new OutputCollector(5);
    for (const chunk of ["ab", "cd", "ef", "gh"]) collector.push(bytes(chunk));
    expect(collector.text()).toBe("abcde");
    expect(collector.totalBytes).toBe(8);
    expect(collector.truncated).toBe(true);
  });

  it("keeps a copy of each chunk, so a backend reusing its buffer does not change kept output", () => {
    const collector = new OutputCollector(100);
    const buffer = bytes("abc");
    collector.push(buffer);
    buffer.set(bytes("xyz"));
    expect(collector.text()).toBe("abc");
  });

  it("ignores empty chunks", () => {
    const collector = new OutputCollector(10);
    const seen: string[] = [];
    collector.onText((text) => seen.push(text));
    collector.push(new Uint8Array(0));
    expect(collector.totalBytes).toBe(0);
    expect(seen).toEqual([]);
  });

  it("gives listeners whole characters when multi-byte characters are split across chunks", () => {
    const collector = new OutputCollector(100);
    const seen: string[] = [];
    collector.onText((text) => seen.push(text));
    const all = bytes("é€😀");
    // Split every character: one byte per chunk.
    for (const byte of all) collector.push(Uint8Array.of(byte));
    collector.finish();
    expect(seen.join("")).toBe("é€😀");
    expect(seen.every((text) => !text.includes("\uFFFD"))).toBe(true);
    expect(collector.text()).toBe("é€😀");
  });

  it("flushes an incomplete character at the end as U+FFFD", () => {
    const collector = new OutputCollector(100);
    const seen: string[] = [];
    collector.onText((text) => seen.push(text));
    collector.push(Uint8Array.of(0x61, 0xe2, 0x82));
    collector.finish();
    expect(seen.join("")).toBe("a\uFFFD");
  });

  it("invalid UTF-8 becomes U+FFFD in text but the raw bytes are kept", () => {
    const collector = new OutputCollector(100);
    collector.push(Uint8Array.of(0xff, 0x41));
    expect(collector.text()).toBe("\uFFFDA");
    expect(collector.bytes()).toEqual(Uint8Array.of(0xff, 0x41));
  });

  it("the default limit is 16 MiB", () => {
    expect(DEFAULT_OUTPUT_LIMIT_BYTES).toBe(16 * 1024 * 1024);
  });
});

describe("TextChannel", () => {
  it("yields pushed text in order, then ends", async () => {
    const channel = new TextChannel();
    channel.push("a");
    const received: string[] = [];
    const reading = (async () => {
      for await (const text of channel) received.push(text);
    })();
    channel.push("b");
    await Promise.resolve();
    channel.push("c");
    channel.end();
    await reading;
    expect(received).toEqual(["a", "b", "c"]);
  });

  it("keeps at most limitBytes of unread text, cutting at a character boundary, and frees room as text is read", async () => {
    const channel = new TextChannel(5);
    channel.push("abc");
    channel.push("dé€f"); // 2 bytes of room: "d" fits, "é" (2 bytes) would not
    channel.push("more"); // 1 byte of room: "m"
    channel.push("dropped"); // full: dropped
    const iterator = channel[Symbol.asyncIterator]();
    expect((await iterator.next()).value).toBe("abc");
    expect((await iterator.next()).value).toBe("d");
    channel.push("xyz"); // room again after reading
    channel.end();
    expect((await iterator.next()).value).toBe("m");
    expect((await iterator.next()).value).toBe("xyz");
    expect((await iterator.next()).done).toBe(true);
  });

  it("text handed straight to a waiting reader is not limited", async () => {
    const channel = new TextChannel(2);
    const iterator = channel[Symbol.asyncIterator]();
    const next = iterator.next();
    channel.push("longer than two");
    expect((await next).value).toBe("longer than two");
  });

  it("an ended empty channel finishes immediately", async () => {
    const channel = new TextChannel();
    channel.end();
    const received: string[] = [];
    for await (const text of channel) received.push(text);
    expect(received).toEqual([]);
  });
});
