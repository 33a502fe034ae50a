/**
 * Raw-byte command output. The SDK's `commands.run` hands output over as text decoded with a streaming UTF-8
 * decoder, so invalid bytes arrive as U+FFFD and the original bytes are lost. envd itself sends bytes. The SDK's
 * own Connect client for envd's `process.Process` service (`sandbox.commands.rpc`, the client `commands.run`
 * uses) is used here to start the process and read the bytes as envd sent them; stdin, kill and everything
 * else still go through the SDK's public methods. When a future SDK drops that client, `spawn` falls back to
 * the public `commands.run` (text) path.
 */

/** The events of envd's `Process.Start` stream, as the SDK's generated client yields them. */
export interface ProcessStartEvent {
  readonly event?: {
    readonly event?:
      | { readonly case: "start"; readonly value: { readonly pid: number } }
      | {
          readonly case: "data";
          readonly value: { readonly output: { readonly case: "stdout" | "stderr" | "pty" | undefined; readonly value?: Uint8Array } };
        }
      | {
          readonly case: "end";
          readonly value: { readonly exitCode: number; readonly exited: boolean; readonly status: string; readonly error?: string };
        }
      | { readonly case: "keepalive" | undefined; readonly value?: unknown };
  };
}

/** The part of the SDK's envd process client used here. */
export interface ProcessStartClient {
  start(
    request: { process: { cmd: string; args: string[]; envs: Record<string, string>; cwd?: string }; stdin: boolean },
    options: { headers: Record<string, string>; signal: AbortSignal },
  ): AsyncIterable<ProcessStartEvent>;
}

/** Returns the SDK's envd process client and envd version, or undefined when this SDK version does not expose them. */
export function processClientOf(commands: unknown): { client: ProcessStartClient; envdVersion: string } | undefined {
  const candidate = commands as { rpc?: { start?: unknown }; envdVersion?: unknown };
  if (!candidate || typeof candidate.rpc?.start !== "function") return undefined;
  return { client: candidate.rpc as ProcessStartClient, envdVersion: typeof candidate.envdVersion === "string" ? candidate.envdVersion : "0.0.0" };
}

const SIGNAL_NUMBERS: Record<string, number> = {
  hangup: 1,
  interrupt: 2,
  quit: 3,
  aborted: 6,
  killed: 9,
  "user defined signal 1": 10,
  "segmentation fault": 11,
  "user defined signal 2": 12,
  "broken pipe": 13,
  terminated: 15,
};

/**
 * Exit code of envd's `end` event. envd reports a signal death as exitCode -1 with a Go status text such as
 * "signal: killed"; that becomes 128 + the signal number (137 when the signal is not recognised).
 */
export function exitCodeOfEnd(end: { exitCode: number; exited: boolean; status: string }): number {
  if (end.exited !== false && end.exitCode >= 0) return end.exitCode;
  const match = /signal: (.+)$/.exec(end.status ?? "");
  const signal = match ? SIGNAL_NUMBERS[match[1]!.trim().toLowerCase()] : undefined;
  return 128 + (signal ?? 9);
}

function versionBelow(version: string, minimum: [number, number, number]): boolean {
  const parts = version.split(/[.-]/).map((part) => Number.parseInt(part, 10) || 0);
  for (let index = 0; index < 3; index++) {
    if ((parts[index] ?? 0) !== minimum[index]) return (parts[index] ?? 0) < minimum[index]!;
  }
  return false;
}

/** Headers the SDK sends with `Process.Start`: keepalive pings, and Basic auth naming the user when one is set (or envd < 0.4.0). */
export function startHeaders(envdVersion: string, user: string | undefined): Record<string, string> {
  const headers: Record<string, string> = { "Keepalive-Ping-Interval": "50" };
  const name = user ?? (versionBelow(envdVersion, [0, 4, 0]) ? "user" : undefined);
  if (name) headers.Authorization = `Basic ${Buffer.from(`${name}:`).toString("base64")}`;
  return headers;
}
