import { createHash, randomBytes, timingSafeEqual } from "node:crypto";

/** The request header a client presents an exposed port's token in (ADR 0053). */
export const PORT_TOKEN_HEADER = "x-sbx-port-token";

/** Longest request head read before the token is found (16 KiB): a client cannot make the host hold more unchecked. */
export const MAX_PORT_REQUEST_HEAD_BYTES = 16 * 1024;

/** A new random token: 32 bytes, base64url (43 characters). */
export function newPortToken(): string {
  return randomBytes(32).toString("base64url");
}

/** The outcome of reading a connection's first bytes for the token. */
export type PortTokenCheck =
  { readonly kind: "more" } | { readonly kind: "refused"; readonly reason: string } | { readonly kind: "accepted"; readonly forward: Buffer };

/** The first line of an HTTP/1.x request: a method, a target without spaces, the version. */
const REQUEST_LINE = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+ [^\s]+ HTTP\/1\.[01]$/;

/**
 * Checks the head of a connection's first HTTP request for the token, before any byte is forwarded: `more` until the
 * head is complete (at most `MAX_PORT_REQUEST_HEAD_BYTES`), then `refused` (not an HTTP/1.x request head, no token,
 * a wrong one) or `accepted` with the bytes to forward: the head without the token's header lines, and whatever came
 * after it. Compared in constant time over SHA-256 digests (the length of the expected token is not revealed either).
 */
export function checkPortToken(received: Buffer, token: string): PortTokenCheck {
  const headEnd = received.indexOf("\r\n\r\n");
  if (headEnd === -1) {
    if (received.byteLength > MAX_PORT_REQUEST_HEAD_BYTES) return { kind: "refused", reason: "the request head is too long" };
    return { kind: "more" };
  }
  if (headEnd > MAX_PORT_REQUEST_HEAD_BYTES) return { kind: "refused", reason: "the request head is too long" };
  const lines = received.subarray(0, headEnd).toString("latin1").split("\r\n");
  if (!REQUEST_LINE.test(lines[0] ?? "")) return { kind: "refused", reason: "not an HTTP/1.x request" };
  const kept: string[] = [lines[0]!];
  let presented: string | undefined;
  for (const line of lines.slice(1)) {
    const colon = line.indexOf(":");
    if (colon > 0 && line.slice(0, colon).trim().toLowerCase() === PORT_TOKEN_HEADER) {
      presented ??= line.slice(colon + 1).trim();
      continue;
    }
    kept.push(line);
  }
  if (presented === undefined) return { kind: "refused", reason: `no ${PORT_TOKEN_HEADER} header` };
  const expected = createHash("sha256").update(token, "latin1").digest();
  const given = createHash("sha256").update(presented, "latin1").digest();
  if (!timingSafeEqual(expected, given)) return { kind: "refused", reason: "a wrong token" };
  const head = Buffer.from(`${kept.join("\r\n")}\r\n\r\n`, "latin1");
  return { kind: "accepted", forward: Buffer.concat([head, received.subarray(headEnd + 4)]) };
}
