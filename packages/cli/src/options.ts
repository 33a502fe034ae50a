import type { NetworkPolicyInput } from "@sbx/core";
import { UsageError } from "./errors.js";

/** Parses a duration: `90` (seconds), `1500ms`, `30s`, `5m`, `2h`. Returns milliseconds. */
export function parseDuration(text: string, flag: string): number {
  const match = /^(\d+(?:\.\d+)?)(ms|s|m|h)?$/.exec(text.trim());
  if (!match) throw new UsageError(`${flag} expects a duration such as 30s, 5m or 1500ms, not ${JSON.stringify(text)}.`);
  const value = Number(match[1]);
  const unit = match[2] ?? "s";
  const milliseconds = Math.round(value * { ms: 1, s: 1000, m: 60_000, h: 3_600_000 }[unit]!);
  if (milliseconds <= 0) throw new UsageError(`${flag} must be greater than zero.`);
  return milliseconds;
}

/** Parses `--network`: `deny` (default), `allow`, or a comma list of hosts to allow with everything else denied. */
export function parseNetwork(text: string | undefined): NetworkPolicyInput {
  if (text === undefined || text === "deny") return { egress: "deny" };
  if (text === "allow") return { egress: "allow" };
  const hosts = text
    .split(",")
    .map((host) => host.trim())
    .filter(Boolean);
  if (hosts.length === 0) throw new UsageError(`--network expects deny, allow, or a comma list of hosts, not ${JSON.stringify(text)}.`);
  return { egress: "deny", allow: hosts };
}

/** Parses repeated `--env NAME=VALUE`. */
export function parseEnvironment(entries: readonly string[] | undefined): Record<string, string> {
  const environment: Record<string, string> = {};
  for (const entry of entries ?? []) {
    const equals = entry.indexOf("=");
    if (equals <= 0) throw new UsageError(`--env expects NAME=VALUE, not ${JSON.stringify(entry)}.`);
    environment[entry.slice(0, equals)] = entry.slice(equals + 1);
  }
  return environment;
}

/** Parses repeated `--upload HOST_PATH:SANDBOX_PATH` (the sandbox path defaults to the file's name in the workspace). */
export function parseUploads(entries: readonly string[] | undefined): Array<{ hostPath: string; sandboxPath: string }> {
  return (entries ?? []).map((entry) => {
    const colon = entry.lastIndexOf(":");
    if (colon <= 0) {
      const name = entry.split("/").filter(Boolean).pop();
      if (!name) throw new UsageError(`--upload expects HOST_PATH[:SANDBOX_PATH], not ${JSON.stringify(entry)}.`);
      return { hostPath: entry, sandboxPath: name };
    }
    return { hostPath: entry.slice(0, colon), sandboxPath: entry.slice(colon + 1) };
  });
}
