/** `truncateForModel` cuts with core's one UTF-8-safe helper (ADR 0035): whole characters, an honest note. */
import { describe, expect, it } from "vitest";
import { truncateForModel } from "../src/index.js";

describe("truncateForModel", () => {
  it.each([
    ["a 2-byte character", "aé", 2, "a", 1],
    ["a 3-byte character", "ab€c", 4, "ab", 2],
    ["a 4-byte character", "x😀y", 4, "x", 1],
  ])("a cut inside %s keeps only whole characters and says how many bytes it shows", (_label, text, limitBytes, kept, shown) => {
    const result = truncateForModel(text, limitBytes);
    const total = Buffer.byteLength(text, "utf8");
    expect(result).toEqual({ text: `${kept}\n[output truncated: showing the first ${shown} of ${total} bytes]`, truncated: true });
  });

  it("a text within the budget is unchanged; a larger total reported by the producer still says it was cut", () => {
    expect(truncateForModel("é😀", 6)).toEqual({ text: "é😀", truncated: false });
    expect(truncateForModel("é😀", 6, 100)).toEqual({ text: "é😀\n[output truncated: showing the first 6 of 100 bytes]", truncated: true });
  });
});
