import { createReadStream } from "node:fs";
import { stat } from "node:fs/promises";
import { resolve } from "node:path";
import { createSandbox, type NetworkPolicyInput, type Sandbox } from "@sbx/core";
import { parseDuration, parseEnvironment, parseNetwork } from "./options.js";
import type { SandboxOutput } from "./sandbox-output.js";
import { ProgressDisplay, PullProgressAggregator } from "./progress.js";
import { progressSettings, requestedTarget, resolveTarget } from "./target.js";
import type { CliEnvironment, OutputMode } from "./terminal.js";
import { formatBytes, status } from "./terminal.js";

/** What `sbx run` and `sbx code` ask for when creating their sandbox. */
export interface CliSandboxRequest {
  /** `--target` (or `auto`). */
  readonly target: string;
  /** `--allow-fake`: let `auto` fall back to the fake. */
  readonly allowFake: boolean;
  /** `--network`. */
  readonly network: NetworkPolicyInput;
  /** `--timeout` in milliseconds, if given: the sandbox lives a minute longer so the command's own timeout fires first. */
  readonly timeoutMs: number | undefined;
  /** `--env` variables. */
  readonly env: Record<string, string>;
}

/** The flags `sbx run` and `sbx code` share: where the sandbox runs, its network, timeout and environment. */
export interface SandboxFlags {
  target?: string;
  network?: string;
  timeout?: string;
  env?: string[];
  "allow-fake"?: boolean;
  "raw-output"?: boolean;
}

/** Reads the shared flags into the sandbox request (the target falls back to `SBX_TARGET`, then `auto`). */
export function sandboxRequestFromFlags(environment: CliEnvironment, flags: SandboxFlags): CliSandboxRequest {
  return {
    target: requestedTarget(flags.target, environment.env),
    allowFake: flags["allow-fake"] === true,
    network: parseNetwork(flags.network),
    timeoutMs: flags.timeout === undefined ? undefined : parseDuration(flags.timeout, "--timeout"),
    env: parseEnvironment(flags.env),
  };
}

/** Output callbacks that stream a command's or a cell's stdout and stderr through `output` (none with `--json`). */
export function streamToTerminal(output: SandboxOutput, mode: OutputMode): { onStdout?: (text: string) => void; onStderr?: (text: string) => void } {
  if (mode.json) return { onStdout: undefined, onStderr: undefined };
  return { onStdout: output.stdout, onStderr: output.stderr };
}

/** Creates the sandbox for one CLI invocation, showing image-pull progress, and says which backend it is on. */
export async function createCliSandbox(environment: CliEnvironment, mode: OutputMode, request: CliSandboxRequest): Promise<Sandbox> {
  const target = await resolveTarget(request.target, { allowFake: request.allowFake, signal: environment.signal, env: environment.env });
  let pull: ProgressDisplay | undefined;
  const aggregator = new PullProgressAggregator();
  let sandbox: Sandbox;
  try {
    sandbox = await createSandbox(target, {
      network: request.network,
      env: request.env,
      timeoutMs: request.timeoutMs === undefined ? undefined : Math.max(600_000, request.timeoutMs + 60_000),
      allowFake: request.allowFake,
      signal: environment.signal,
      metadata: { "created-by": "sbx-cli" },
      settings: progressSettings(target, (event) => {
        pull ??= new ProgressDisplay(environment, mode, `pull ${target.slice("docker://".length) || "image"}`);
        const totals = aggregator.add(event);
        pull.update(totals.current, totals.total);
      }),
    });
  } catch (error) {
    pull?.abandon();
    throw error;
  }
  pull?.finish("image ready");
  const egress =
    request.network.egress === "allow" ? "allowed" : request.network.allow?.length ? `denied except ${request.network.allow.join(", ")}` : "denied";
  status(environment, mode, `sandbox ${sandbox.id} on ${sandbox.backend}, network ${egress}`);
  return sandbox;
}

/** Uploads one host file with a progress display, streaming (bytes are counted as the backend consumes them). */
export async function uploadWithProgress(
  environment: CliEnvironment,
  mode: OutputMode,
  sandbox: Sandbox,
  upload: { hostPath: string; sandboxPath: string },
): Promise<number> {
  const hostPath = resolve(environment.cwd, upload.hostPath);
  const { size } = await stat(hostPath);
  const display = new ProgressDisplay(environment, mode, `upload ${upload.hostPath}`);
  let sent = 0;
  async function* counted(): AsyncIterable<Uint8Array> {
    for await (const chunk of createReadStream(hostPath, { highWaterMark: 64 * 1024 })) {
      sent += (chunk as Buffer).length;
      display.update(sent, size);
      yield chunk as Buffer;
    }
  }
  display.update(0, size);
  try {
    await sandbox.files.write(upload.sandboxPath, counted(), { signal: environment.signal });
  } catch (error) {
    display.abandon();
    throw error;
  }
  display.finish(`${formatBytes(sent)} to ${upload.sandboxPath}`);
  return sent;
}
