/** The bytes that introduce a control string after ESC: `]` OSC, `P` DCS, `_` APC, `^` PM, `X` SOS. */
const STRING_INTRODUCERS = new Set([0x5d, 0x50, 0x5f, 0x5e, 0x58]);

const ESC = 0x1b;
const BEL = 0x07;
const STRING_TERMINATOR_FINAL = 0x5c;

/**
 * Passes a sandbox terminal's bytes through to the user's terminal (colours, cursor movement and screen modes work:
 * `sbx shell` is a terminal session) but drops every control string: OSC (window title, clipboard write OSC 52,
 * hyperlinks), DCS, APC, PM and SOS, from their introducer to their terminator, across chunk boundaries. Those are the
 * sequences that act outside the sandbox's screen area (the clipboard, the title, the terminal's own state). Keeps no
 * buffer: memory stays constant whatever the sandbox prints (ADR 0049).
 */
export class TerminalStringFilter {
  private state: "text" | "escape" | "string" | "string-escape" = "text";

  /** Filters one chunk; the result holds every byte of the chunk that is not part of a control string. */
  push(chunk: Uint8Array): Uint8Array {
    const kept = new Uint8Array(chunk.byteLength + 1);
    let length = 0;
    for (const byte of chunk) {
      switch (this.state) {
        case "text":
          if (byte === ESC) this.state = "escape";
          else kept[length++] = byte;
          break;
        case "escape":
          if (STRING_INTRODUCERS.has(byte)) {
            this.state = "string";
          } else {
            kept[length++] = ESC;
            if (byte === ESC) break;
            kept[length++] = byte;
            this.state = "text";
          }
          break;
        case "string":
          if (byte === BEL) this.state = "text";
          else if (byte === ESC) this.state = "string-escape";
          break;
        case "string-escape":
          this.state = byte === STRING_TERMINATOR_FINAL ? "text" : byte === ESC ? "string-escape" : "string";
          break;
      }
    }
    return kept.subarray(0, length);
  }
}
