import { describe, expect, it } from "vitest";
import { parseListOutput, parseStatOutput } from "../src/posix/file-helper-output.ts";
import { decodeNameBytes, encodeNameBytes } from "../src/posix/name-bytes.ts";

const bytes = (...parts: (string | number[])[]) =>
  Uint8Array.from(parts.flatMap((part) => (typeof part === "string" ? [...new TextEncoder().encode(part)] : part)));

describe("names as bytes (ADR 0031)", () => {
  it("every byte string round-trips, and a name that is not UTF-8 never decodes like its U+FFFD decoy", () => {
    const samples = [
      bytes("sec", [0xff]),
      bytes("sec\ufffd"),
      bytes([0xed, 0xa0, 0x80]),
      bytes([0xc0, 0xaf]),
      bytes([0xf4, 0x90, 0x80, 0x80]),
      bytes("ü😀", [0x80]),
      bytes("-x\n\t\\'\""),
    ];
    for (const sample of samples) expect(encodeNameBytes(decodeNameBytes(sample))).toEqual(sample);
    expect(decodeNameBytes(bytes("sec", [0xff]))).toBe("sec\udcff");
    expect(decodeNameBytes(bytes("sec\ufffd"))).toBe("sec\ufffd");
    for (let byte = 0; byte < 256; byte++) expect(encodeNameBytes(decodeNameBytes(Uint8Array.of(byte, 0x41)))).toEqual(Uint8Array.of(byte, 0x41));
  });

  it("a lone surrogate that stands for no byte is refused with PathError invalid", () => {
    expect(() => encodeNameBytes("a\ud800b")).toThrow(expect.objectContaining({ code: "SBX_PATH", reason: "invalid" }));
    expect(() => encodeNameBytes("a\udc41")).toThrow(expect.objectContaining({ code: "SBX_PATH", reason: "invalid" }));
  });
});

describe("the file helper's answers are parsed exactly (ADR 0031)", () => {
  const good = bytes("sbx-list 2\nf 5 10 5\nreal1\nl 3 10 3\n", [0x73, 0x65, 0xff], "\nsbx-end\n");

  it("a well-formed listing gives its entries, names from bytes", () => {
    expect(parseListOutput(good, "/workspace").map((entry) => [entry.name, entry.path, entry.type, entry.size])).toEqual([
      ["real1", "/workspace/real1", "file", 5],
      ["se\udcff", "/workspace/se\udcff", "symlink", 3],
    ]);
    expect(parseStatOutput(bytes("sbx-stat f 5 1700000000\n"), "/workspace/real.txt")).toMatchObject({ name: "real.txt", type: "file", size: 5 });
  });

  const forged: Record<string, Uint8Array> = {
    "bytes after the end": bytes("sbx-list 2\nf 5 10 5\nreal1\nl 3 10 3\nse!\nsbx-end\nsbx-list 1\nf 31337 0 6\nforged\nsbx-end\n"),
    "injected lines before the header": bytes("regular file|31337|0\n../../.bashrc\0sbx-list 0\nsbx-end\n"),
    "a count that does not match": bytes("sbx-list 2\nf 5 10 5\nreal1\nsbx-end\n"),
    "a name length that does not match": bytes("sbx-list 1\nf 5 10 4\nreal1\nsbx-end\n"),
    "a name with a slash": bytes("sbx-list 1\nf 5 10 8\n../.bash\nsbx-end\n"),
    "two entries with one name": bytes("sbx-list 2\nf 5 10 1\na\nf 5 10 1\na\nsbx-end\n"),
    "a dot-dot entry": bytes("sbx-list 1\nd 5 10 2\n..\nsbx-end\n"),
    "a missing end": bytes("sbx-list 0\n"),
  };
  for (const [what, output] of Object.entries(forged)) {
    it(`a listing with ${what} is a ProviderError, never entries`, () => {
      expect(() => parseListOutput(output, "/workspace")).toThrow(expect.objectContaining({ code: "SBX_PROVIDER" }));
    });
  }

  it("a stat answer with anything more than its one line is a ProviderError", () => {
    for (const output of [
      bytes("sbx-stat f 999999 0\nsbx-stat f 5 0\n"),
      bytes("INJECTED\nsbx-stat f 5 0\n"),
      bytes("sbx-stat f 5 0"),
      bytes("sbx-stat x 5 0\n"),
    ]) {
      expect(() => parseStatOutput(output, "/workspace/real.txt")).toThrow(expect.objectContaining({ code: "SBX_PROVIDER" }));
    }
  });
});
