import { describe, expect, it } from "vitest";
import { compileAllowlist, isNonPublicAddress } from "../src/egress/allowlist.js";
import { parseProxyRequest } from "../src/egress/egress-proxy.js";

describe("allowlist entries and matching (no engine needed)", () => {
  const allowlist = compileAllowlist(["PyPI.org.", "*.pythonhosted.org", "10.1.2.0/24", "mirror.internal:8443", "[fd00::1]:9000"], [80, 443]);

  it("exact names match case-insensitively and without a trailing dot, only on the default ports", () => {
    expect(allowlist.allows("pypi.org", 443)).toBe(true);
    expect(allowlist.allows("PYPI.ORG.", 80)).toBe(true);
    expect(allowlist.allows("pypi.org", 8080)).toBe(false);
    expect(allowlist.allows("pypi.org.evil.test", 443)).toBe(false);
    expect(allowlist.allows("evilpypi.org", 443)).toBe(false);
  });

  it("a wildcard matches deeper names, never the bare suffix or a look-alike", () => {
    expect(allowlist.allows("files.pythonhosted.org", 443)).toBe(true);
    expect(allowlist.allows("a.b.pythonhosted.org", 443)).toBe(true);
    expect(allowlist.allows("pythonhosted.org", 443)).toBe(false);
    expect(allowlist.allows("evilpythonhosted.org", 443)).toBe(false);
  });

  it("CIDR entries match IP literals only; an explicit port allows only that port", () => {
    expect(allowlist.allows("10.1.2.77", 443)).toBe(true);
    expect(allowlist.allows("10.1.3.1", 443)).toBe(false);
    expect(allowlist.allows("mirror.internal", 8443)).toBe(true);
    expect(allowlist.allows("mirror.internal", 443)).toBe(false);
    expect(allowlist.allows("[fd00::1]", 9000)).toBe(true);
    expect(allowlist.coversAddress("10.1.2.3")).toBe(true);
    expect(allowlist.coversAddress("10.9.9.9")).toBe(false);
  });

  it("invalid entries are refused naming the entry and its index", () => {
    for (const entry of ["pypi.org:0", "*.org", "10.0.0.0/33", "bad_name!", "münchen.de", "10.0.0.999"]) {
      expect(() => compileAllowlist(["pypi.org", entry], [443])).toThrow(
        expect.objectContaining({ code: "SBX_INVALID_ARGUMENT", field: "network.allow.1" }),
      );
    }
  });

  it("non-public resolved addresses are recognised, v4-mapped included", () => {
    for (const address of [
      "127.0.0.1",
      "10.0.0.1",
      "172.17.0.1",
      "192.168.1.1",
      "169.254.169.254",
      "100.64.0.1",
      "0.0.0.0",
      "::1",
      "fd00::1",
      "fe80::1",
      "::ffff:127.0.0.1",
    ])
      expect(isNonPublicAddress(address)).toBe(true);
    for (const address of ["93.184.216.34", "2606:4700::1111"]) expect(isNonPublicAddress(address)).toBe(false);
  });

  it("proxy requests: CONNECT authority, absolute URI equal to Host, rewritten with Connection: close", () => {
    expect(parseProxyRequest("CONNECT pypi.org:443 HTTP/1.1\r\nHost: pypi.org:443")).toMatchObject({
      method: "CONNECT",
      host: "pypi.org",
      port: 443,
      forwardHead: null,
    });
    const plain = parseProxyRequest("GET http://Index.Test:8080/simple/ HTTP/1.1\r\nHost: index.test:8080\r\nProxy-Connection: keep-alive");
    expect(plain).toMatchObject({ method: "GET", host: "index.test", port: 8080 });
    expect(plain.forwardHead).toBe("GET /simple/ HTTP/1.1\r\nHost: index.test:8080\r\nConnection: close\r\n\r\n");
    expect(() => parseProxyRequest("GET http://allowed.test/ HTTP/1.1\r\nHost: other.test")).toThrow(/differs/);
    expect(() => parseProxyRequest("GET http://allowed.test@other.test/ HTTP/1.1")).toThrow(/user information/);
    expect(() => parseProxyRequest("GET /relative HTTP/1.1\r\nHost: x.test")).toThrow(/absolute/);
  });
});
