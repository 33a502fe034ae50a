/** `truncateUtf8`: the one UTF-8-safe cut (ADR 0035), used by core's output caps and by @sbx/ai-sdk and @sbx/mcp. */
import { describe, expect, it } from "vitest";
import { truncateUtf8 } from "../src/index.ts";
import { TextChannel } from "../src/limits/output-collector.ts";
import { TextOutputCollector } from "../src/limits/text-output-collector.ts";

describe("truncateUtf8", () => {
  it.each([
    ["a 2-byte character cut after its first byte", "aé", 2, "a", 1],
    ["a 3-byte character cut inside", "ab€", 4, "ab", 2],
    ["a 4-byte character (a surrogate pair) cut after 3 of its bytes", "x😀", 4, "x", 1],
    ["a 4-byte character kept whole at the budget", "x😀y", 5, "x😀", 5],
    ["a budget of zero", "é", 0, "", 0],
    ["a budget inside the first character", "😀", 3, "", 0],
  ])("%s", (_label, text, maxBytes, expected, byteLength) => {
    const prefix = truncateUtf8(text, { maxBytes });
    expect(prefix).toEqual({ text: expected, byteLength, truncated: true });
    expect(Buffer.byteLength(prefix.text, "utf8")).toBe(byteLength);
    expect(prefix.text).not.toContain("\uFFFD");
  });

  it("a text that fits is returned whole, with its exact byte length", () => {
    expect(truncateUtf8("é😀", { maxBytes: 6 })).toEqual({ text: "é😀", byteLength: 6, truncated: false });
    expect(truncateUtf8("é😀", { maxBytes: 100 })).toEqual({ text: "é😀", byteLength: 6, truncated: false });
    expect(truncateUtf8("", { maxBytes: 0 })).toEqual({ text: "", byteLength: 0, truncated: false });
  });

  it("every budget over a mixed text gives the longest whole-character prefix", () => {
    const text = "aé€😀b";
    const characters = [...text];
    for (let maxBytes = 0; maxBytes <= 12; maxBytes++) {
      let expected = "";
      for (const character of characters) {
        if (Buffer.byteLength(expected + character) > maxBytes) break;
        expected += character;
      }
      expect(truncateUtf8(text, { maxBytes }).text).toBe(expected);
    }
  });

  it("the work is bounded by the budget, not the input: only the first maxBytes code units are read", () => {
    // Structural check of linearity: a text whose code units past the budget throw when read (a Proxy cannot stand
    // in for a string, so a 64 MiB string stands for 'huge'); cutting it to 8 bytes touches only its first 8 units.
    const huge = "é".repeat(32 * 1024 * 1024);
    const slices: Array<[number, number]> = [];
    // eslint-disable-next-line @typescript-eslint/unbound-method -- restored onto String.prototype after the check, never called detached
    const originalSlice = String.prototype.slice;
    String.prototype.slice = function (this: string, start?: number, end?: number) {
      if (this === huge) slices.push([start ?? 0, end ?? this.length]);
      return originalSlice.call(this, start, end);
    };
    try {
      expect(truncateUtf8(huge, { maxBytes: 8 })).toEqual({ text: "éééé", byteLength: 8, truncated: true });
    } finally {
      String.prototype.slice = originalSlice;
    }
    expect(slices).toEqual([[0, 8]]);
  });
});

describe("the output collectors cut with it", () => {
  it("TextChannel keeps a 10 MB multi-byte push cut at the queue limit in one linear pass (it was a per-character loop, quadratic)", async () => {
    const limitBytes = 5 * 1024 * 1024 + 1;
    const channel = new TextChannel(limitBytes);
    channel.push("€".repeat(Math.floor((10 * 1024 * 1024) / 3)));
    channel.end();
    const kept: string[] = [];
    for await (const text of channel) kept.push(text);
    expect(kept.join("")).toBe("€".repeat(Math.floor(limitBytes / 3)));
  });

  it("TextOutputCollector cuts a multi-byte character at its limit without splitting it", () => {
    const collector = new TextOutputCollector(5);
    collector.push("ab😀c");
    expect(collector.text()).toBe("ab");
    expect(collector.truncated).toBe(true);
    expect(collector.totalBytes).toBe(7);
  });
});
