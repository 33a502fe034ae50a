import { describe, expect, it } from "vitest";
import { LineSplitter } from "../src/line-splitter.js";

describe("LineSplitter", () => {
  it("returns whole lines in order, across chunks, and keeps a UTF-8 character split between two chunks whole", () => {
    const splitter = new LineSplitter();
    const bytes = Buffer.from('{"a":"é€"}\nsecond\n\nthird', "utf8");
    const lines: string[] = [];
    // One byte at a time: every multi-byte character is split between chunks.
    for (const byte of bytes) lines.push(...splitter.push(Buffer.from([byte])));
    expect(lines).toEqual(['{"a":"é€"}', "second", ""]);
    expect(splitter.push(Buffer.from("\n"))).toEqual(["third"]);
  });

  it("splits a line of 16 MiB sent in 16 KiB chunks into that one line", () => {
    const splitter = new LineSplitter();
    const chunk = Buffer.alloc(16 * 1024, "x");
    for (let index = 0; index < 1024; index++) expect(splitter.push(chunk)).toEqual([]);
    const [line, ...rest] = splitter.push(Buffer.from("\nnext"));
    expect(line?.length).toBe(16 * 1024 * 1024);
    expect(rest).toEqual([]);
    expect(splitter.push(Buffer.from("\n"))).toEqual(["next"]);
  });

  it("forgets an unfinished line on reset", () => {
    const splitter = new LineSplitter();
    splitter.push(Buffer.from("half"));
    splitter.reset();
    expect(splitter.push(Buffer.from("new\n"))).toEqual(["new"]);
  });
});
