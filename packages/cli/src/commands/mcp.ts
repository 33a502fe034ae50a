import { serveHttp, serveStdio } from "@sbx/mcp";
import { UsageError } from "../errors.js";
import { parseDuration, parseNetwork } from "../options.js";
import { requestedTarget, resolveTarget } from "../target.js";
import type { CliEnvironment, OutputMode } from "../terminal.js";
import { status } from "../terminal.js";

/** Flags of `sbx mcp`. */
export interface McpFlags {
  target?: string;
  network?: string;
  http?: string;
  host?: string;
  "allow-fake"?: boolean;
  "max-sessions"?: string;
  "idle-timeout"?: string;
}

/** Reads `--max-sessions` (a positive whole number) and `--idle-timeout` (a duration) for the HTTP server. */
function sessionLimits(flags: McpFlags): { maxSessions?: number; sessionIdleTimeoutMs?: number } {
  if (flags.http === undefined && (flags["max-sessions"] !== undefined || flags["idle-timeout"] !== undefined))
    throw new UsageError("--max-sessions and --idle-timeout only make sense with --http PORT.");
  const limits: { maxSessions?: number; sessionIdleTimeoutMs?: number } = {};
  if (flags["max-sessions"] !== undefined) {
    const maxSessions = Number(flags["max-sessions"]);
    if (!Number.isSafeInteger(maxSessions) || maxSessions <= 0)
      throw new UsageError(`--max-sessions expects a positive whole number, not ${JSON.stringify(flags["max-sessions"])}.`);
    limits.maxSessions = maxSessions;
  }
  if (flags["idle-timeout"] !== undefined) limits.sessionIdleTimeoutMs = parseDuration(flags["idle-timeout"], "--idle-timeout");
  return limits;
}

function untilAborted(signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve) => {
    if (!signal) return;
    if (signal.aborted) resolve();
    else signal.addEventListener("abort", () => resolve(), { once: true });
  });
}

/**
 * `sbx mcp [--target URI] [--network deny|allow|HOSTS] [--http PORT] [--host ADDRESS] [--max-sessions N] [--idle-timeout DURATION]`: serves sandbox tools over
 * MCP. Without `--http`, over stdio (stdout carries the protocol, so status goes to stderr); with `--http PORT`
 * (0 picks a free port), Streamable HTTP on 127.0.0.1 unless `--host` says otherwise; `--json` prints
 * `{ "url": ... }` on stdout once listening. The target is resolved once at start; the network policy is the
 * server's (denied by default). Ends on Ctrl-C/SIGTERM (stdio: also when the client closes the pipe), killing every sandbox.
 */
export async function mcpCommand(environment: CliEnvironment, mode: OutputMode, flags: McpFlags): Promise<number> {
  const target = await resolveTarget(requestedTarget(flags.target, environment.env), {
    allowFake: flags["allow-fake"] === true,
    signal: environment.signal,
    env: environment.env,
  });
  const network = parseNetwork(flags.network);
  const limits = sessionLimits(flags);
  const options = { target, sandboxOptions: { network } };
  if (flags.http === undefined) {
    if (flags.host !== undefined) throw new UsageError("--host only makes sense with --http PORT.");
    const session = await serveStdio(options);
    status(
      environment,
      { ...mode, json: false },
      `MCP server on stdio, target ${target}, network ${network.egress === "allow" ? "allowed" : "denied"}${network.allow?.length ? ` except ${network.allow.join(", ")}` : ""}`,
    );
    await Promise.race([session.closed, untilAborted(environment.signal)]);
    await session.close();
    return 0;
  }
  const port = Number(flags.http);
  if (!Number.isInteger(port) || port < 0 || port > 65_535)
    throw new UsageError(`--http expects a port number (0 for any free port), not ${JSON.stringify(flags.http)}.`);
  const server = await serveHttp({ ...options, ...limits, port, host: flags.host });
  if (mode.json) environment.stdout.write(`${JSON.stringify({ url: server.url.href, target, network })}\n`);
  else if (!mode.quiet) environment.stdout.write(`MCP server (Streamable HTTP) at ${server.url.href}, target ${target}\n`);
  await untilAborted(environment.signal);
  await server.close();
  return 0;
}
