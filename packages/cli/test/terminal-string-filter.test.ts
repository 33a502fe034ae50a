import { describe, expect, it } from "vitest";
import { TerminalStringFilter } from "../src/terminal-string-filter.ts";

const bytes = (text: string) => new Uint8Array(Buffer.from(text, "latin1"));
const text = (data: Uint8Array) => Buffer.from(data).toString("latin1");

describe("TerminalStringFilter (sbx shell's output)", () => {
  it("keeps text, colours and cursor movement", () => {
    const filter = new TerminalStringFilter();
    expect(text(filter.push(bytes("plain \u001b[31mred\u001b[0m \u001b[2J\u001b[H")))).toBe("plain \u001b[31mred\u001b[0m \u001b[2J\u001b[H");
  });

  it("drops window-title, clipboard, DCS and APC strings, terminated by BEL or ST", () => {
    const filter = new TerminalStringFilter();
    const attack = "a\u001b]0;pwned\u0007b\u001b]52;c;cHduZWQ=\u001b\\c\u001bPq#0;1;2\u001b\\d\u001b_apc\u0007e";
    expect(text(filter.push(bytes(attack)))).toBe("abcde");
  });

  it("drops a string split across chunks, with no buffer, and resumes after it", () => {
    const filter = new TerminalStringFilter();
    const chunks = ["x\u001b", "]52;c;", "AAAA".repeat(1000), "\u001b", "\\y"];
    expect(chunks.map((chunk) => text(filter.push(bytes(chunk)))).join("")).toBe("xy");
  });
});
