import { describe, expect, it } from "vitest";
import { parseProxyRequest } from "../src/egress/egress-proxy.js";
import { bodyFramer, BodyFramingError } from "../src/egress/request-body.js";

const head = (...headers: string[]) => ["POST http://allowed.test/ HTTP/1.1", "Host: allowed.test", ...headers].join("\r\n");

describe("egress proxy request framing (no engine needed)", () => {
  it("ambiguous heads are refused before anything is forwarded", () => {
    const refused: Array<[string, RegExp]> = [
      [head("X-Pad: 1\nGET http://evil.test/ HTTP/1.1"), /bare LF/],
      [head("X-Pad: 1\rGET http://evil.test/ HTTP/1.1"), /bare CR/],
      [head("X-Pad: 1", " folded"), /obs-fold/],
      [head("X-Pad: 1", "\tfolded"), /obs-fold/],
      [head("X-Pad: a\x00b"), /control character/],
      [head("Content-Length: 5", "Transfer-Encoding: chunked"), /Content-Length and Transfer-Encoding/],
      [head("Content-Length: 5", "Content-Length: 5"), /more than one Content-Length/],
      [head("Content-Length: 5, 5"), /not a number/],
      [head("Content-Length: -1"), /not a number/],
      [head("Transfer-Encoding: gzip"), /only a single "chunked"/],
      [head("Transfer-Encoding: chunked", "Transfer-Encoding: chunked"), /only a single "chunked"/],
      [head("Transfer-Encoding: gzip, chunked"), /only a single "chunked"/],
      [head("Content-Length : 5"), /malformed header/],
    ];
    for (const [text, reason] of refused) expect(() => parseProxyRequest(text), JSON.stringify(text)).toThrow(reason);
  });

  it("well-framed heads give the body's framing", () => {
    expect(parseProxyRequest(head()).body).toEqual({ kind: "none" });
    expect(parseProxyRequest(head("Content-Length: 0")).body).toEqual({ kind: "none" });
    expect(parseProxyRequest(head("content-length: 12")).body).toEqual({ kind: "length", length: 12 });
    expect(parseProxyRequest(head("Transfer-Encoding: Chunked")).body).toEqual({ kind: "chunked" });
    expect(parseProxyRequest("CONNECT allowed.test:443 HTTP/1.1\r\nHost: allowed.test:443").body).toEqual({ kind: "none" });
  });

  it("a Content-Length body ends at its length; what follows is reported apart", () => {
    const framer = bodyFramer({ kind: "length", length: 5 });
    const first = framer.push(Buffer.from("abc"));
    expect([first.body.toString(), first.done, first.after.toString()]).toEqual(["abc", false, ""]);
    const second = framer.push(Buffer.from("deGET http://evil.test/"));
    expect([second.body.toString(), second.done, second.after.toString()]).toEqual(["de", true, "GET http://evil.test/"]);
  });

  it("a chunked body ends after its last chunk and trailers, across any split of the bytes", () => {
    const body = "3;ext=1\r\nabc\r\n10\r\n0123456789abcdef\r\n0\r\nX-Trailer: 1\r\n\r\n";
    const after = "GET http://evil.test/ HTTP/1.1\r\n\r\n";
    const bytes = Buffer.from(body + after);
    for (const size of [1, 2, 3, 7, bytes.byteLength]) {
      const framer = bodyFramer({ kind: "chunked" });
      const kept: Buffer[] = [];
      const left: Buffer[] = [];
      for (let at = 0; at < bytes.byteLength; at += size) {
        const framed = framer.push(bytes.subarray(at, at + size));
        kept.push(framed.body);
        left.push(framed.after);
        if (framed.done) left.push(bytes.subarray(at + size));
        if (framed.done) break;
      }
      expect(Buffer.concat(kept).toString(), `split ${size}`).toBe(body);
      expect(Buffer.concat(left).toString(), `split ${size}`).toBe(after);
      expect(framer.done).toBe(true);
    }
  });

  it("chunked framing that does not parse exactly is an error", () => {
    for (const text of [
      "3\nabc\r\n0\r\n\r\n",
      "zz\r\nabc\r\n",
      "3\r\nabcX\r\n",
      "0\r\nbad trailer\r\n\r\n",
      "0\r\nX: 1\n\r\n",
      `${"1".repeat(2000)}\r\n`,
    ]) {
      expect(() => bodyFramer({ kind: "chunked" }).push(Buffer.from(text)), JSON.stringify(text)).toThrow(BodyFramingError);
    }
  });
});
