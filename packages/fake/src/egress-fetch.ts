import { request as httpRequest, type IncomingMessage } from "node:http";
import { request as httpsRequest } from "node:https";
import type { SecureFetch } from "just-bash";
import type { NetworkPolicy } from "@sbx/core";
import { compileAllowlist } from "@sbx/core/adapter";

/** Most redirects followed by `curl -L` inside the fake. */
const MAX_REDIRECTS = 10;

/** How the fake enforces one egress policy, in words for the audit record. */
export function describeEgressEnforcement(policy: NetworkPolicy): string {
  if (policy.egress === "allow")
    return "in-process: just-bash curl given a fetch that reaches any host; Python (python3 in commands, runCode) has no working sockets in this engine";
  if (policy.allow && policy.allow.length > 0) {
    return `in-process: just-bash curl given a fetch that checks every request and redirect against the host allowlist (${policy.allow.join(", ")}); Python socket connections outside it are refused by an audit hook`;
  }
  return "in-process: just-bash curl given a fetch that refuses every request; Python socket connections are refused by an audit hook (just-bash's CPython has no network at all)";
}

/**
 * The fetch just-bash's `curl` uses: refuses everything under `egress: "deny"` without an allowlist,
 * checks each request and each redirect hop against the allowlist, and passes through under `egress: "allow"`.
 */
export function createEgressFetch(policy: NetworkPolicy): SecureFetch {
  // core's one allowlist grammar; an entry without a port allows every port (just-bash's curl has no port policy of its own).
  const allowlist = policy.egress === "allow" ? undefined : compileAllowlist(policy.allow ?? [], { backend: "fake" });
  return async (url, options = {}) => {
    let current = url;
    let method = options.method ?? "GET";
    let body = options.body;
    const follow = options.followRedirects ?? true;
    const limit = options.maxRedirects ?? MAX_REDIRECTS;
    for (let hop = 0; ; hop++) {
      const parsed = new URL(current);
      if (parsed.protocol !== "http:" && parsed.protocol !== "https:")
        throw new Error(`Network access denied: only http and https are supported (${parsed.protocol})`);
      const port = parsed.port === "" ? (parsed.protocol === "https:" ? 443 : 80) : Number(parsed.port);
      if (allowlist && !allowlist.allows(parsed.hostname, port)) {
        throw new Error(`Network access denied by the sandbox egress policy: ${parsed.hostname} is not allowed`);
      }
      const response = await send(
        parsed,
        method,
        options.headers,
        method === "GET" || method === "HEAD" ? undefined : body,
        combineSignals(options.signal, options.timeoutMs),
      );
      const location = response.headers.location;
      if (follow && location && response.status >= 300 && response.status < 400) {
        if (hop >= limit) throw new Error(`Too many redirects (more than ${limit})`);
        current = new URL(location, current).href;
        if (response.status === 303 || ((response.status === 301 || response.status === 302) && method === "POST")) {
          method = "GET";
          body = undefined;
        }
        continue;
      }
      return { status: response.status, statusText: response.statusText, headers: response.headers, body: response.body, url: current };
    }
  };
}

function combineSignals(signal: AbortSignal | undefined, timeoutMs: number | undefined): AbortSignal | undefined {
  const signals = [signal, timeoutMs ? AbortSignal.timeout(timeoutMs) : undefined].filter((value): value is AbortSignal => value !== undefined);
  if (signals.length === 0) return undefined;
  return signals.length === 1 ? signals[0] : AbortSignal.any(signals);
}

/**
 * One HTTP request with node:http(s). Not the global fetch: just-bash runs commands inside guarded async contexts
 * in which undici's fetch fails.
 */
function send(
  url: URL,
  method: string,
  headers: Headers | Record<string, string> | undefined,
  body: string | undefined,
  signal: AbortSignal | undefined,
): Promise<{ status: number; statusText: string; headers: Record<string, string>; body: Uint8Array }> {
  const plainHeaders: Record<string, string> = {};
  if (headers instanceof Headers)
    headers.forEach((value, name) => {
      plainHeaders[name] = value;
    });
  else Object.assign(plainHeaders, headers ?? {});
  return new Promise((resolve, reject) => {
    const request = (url.protocol === "https:" ? httpsRequest : httpRequest)(
      url,
      { method, headers: plainHeaders, signal },
      (response: IncomingMessage) => {
        const chunks: Buffer[] = [];
        response.on("data", (chunk: Buffer) => chunks.push(chunk));
        response.on("error", reject);
        response.on("end", () => {
          const responseHeaders: Record<string, string> = {};
          for (const [name, value] of Object.entries(response.headers))
            if (value !== undefined) responseHeaders[name] = Array.isArray(value) ? value.join(", ") : value;
          resolve({
            status: response.statusCode ?? 0,
            statusText: response.statusMessage ?? "",
            headers: responseHeaders,
            body: new Uint8Array(Buffer.concat(chunks)),
          });
        });
      },
    );
    request.on("error", reject);
    if (body !== undefined) request.write(body);
    request.end();
  });
}
