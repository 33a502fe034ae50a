import { allValues, lastValue, parseArguments } from "./arguments.js";
import { CliFailure, usageError } from "./cli-failure.js";
import { listContainers } from "./container-records.js";
import { commitOf, type StandinModes } from "./standin-modes.js";
import { swiftJson } from "./swift-json.js";

/** What a command prints and its exit code. */
export interface CommandOutput {
  readonly stdout: string;
  readonly stderr?: string;
  readonly exitCode: number;
}

/** `container --version`: `ReleaseVersion.singleLine`. Works without the API server. */
export function versionLine(modes: StandinModes): string {
  return `container CLI version ${modes.version} (build: release, commit: ${commitOf(modes.version)})\n`;
}

const APP_ROOT = "/Users/sbx/Library/Application Support/com.apple.container";
const INSTALL_ROOT = "/usr/local";

/**
 * `container system status [--format json|table]`: exit 0 and `running`, or exit 1 with `not running` /
 * `unregistered`. Flat up to 1.3.x (`apiServer*`, `appRoot`, `installRoot`, all `""` when down); nested from 1.4.1
 * (`client`, `server`, `host`, `resources`, `paths`, apple/container#1769; when down only `{"status":"unregistered"}`,
 * as captured on 1.4.1 by suruseas/opossum's testdata/real-cli-output.md).
 */
export async function systemStatus(args: readonly string[], modes: StandinModes): Promise<CommandOutput> {
  const parsed = parseArguments(
    args,
    [
      { names: ["--format"], value: true },
      { names: ["--prefix"], value: true },
    ],
    "system status",
  );
  const format = lastValue(parsed, "--format") ?? "table";
  const running = modes.service === "running";
  const status = running ? "running" : modes.service === "unregistered" ? "unregistered" : "not running";
  const exitCode = running ? 0 : 1;
  if (format !== "json") {
    const line = running
      ? "apiserver is running"
      : modes.service === "unregistered"
        ? "apiserver is not running and not registered with launchd"
        : "apiserver is not running";
    return { stdout: `${line}\n`, exitCode };
  }
  const commit = commitOf(modes.version);
  if (modes.generation === "1.0") {
    const value = {
      apiServerAppName: running ? "container-apiserver" : "",
      apiServerBuild: running ? "release" : "",
      apiServerCommit: running ? commit : "",
      apiServerVersion: running ? modes.version : "",
      appRoot: running ? APP_ROOT + "/" : "",
      installRoot: running ? INSTALL_ROOT + "/" : "",
      status,
    };
    return { stdout: swiftJson(value, { pretty: false, escapeSlashes: true }) + "\n", exitCode };
  }
  // Down, 1.4.1 prints the status alone (captured: `{"status":"unregistered"}`, exit 1).
  const value: Record<string, unknown> = { status };
  if (running) {
    value.client = { appName: "container", build: "release", commit, version: modes.version };
    const containers = await listContainers(modes);
    value.server = { appName: "container-apiserver", build: "release", commit, version: modes.version };
    value.host = { architecture: "arm64", cpus: 10, operatingSystem: "macOS 26.1" };
    value.resources = {
      containersRunning: containers.filter((entry) => entry.status.state === "running").length,
      containersTotal: containers.length,
      images: 1,
    };
    value.paths = { appRoot: APP_ROOT + "/", installRoot: INSTALL_ROOT + "/" };
  }
  return { stdout: swiftJson(value, { pretty: false, escapeSlashes: false }) + "\n", exitCode };
}

/** `container system version --format json`: the CLI, plus the API server when it answers. */
export function systemVersion(args: readonly string[], modes: StandinModes): CommandOutput {
  const parsed = parseArguments(args, [{ names: ["--format"], value: true }], "system version");
  const commit = commitOf(modes.version);
  const entries = [{ appName: "container", buildType: "release", commit, version: modes.version }];
  if (modes.service === "running") entries.push({ appName: "container-apiserver", buildType: "release", commit, version: modes.version });
  if (allValues(parsed, "--format").at(-1) === "json")
    return { stdout: swiftJson(entries, { pretty: false, escapeSlashes: modes.generation === "1.0" }) + "\n", exitCode: 0 };
  return { stdout: entries.map((entry) => `${entry.appName} ${entry.version} (${entry.buildType}, ${entry.commit})`).join("\n") + "\n", exitCode: 0 };
}

/** `container system start|stop`: refused by the stand-in (the service mode is an environment switch). */
export function systemUnsupported(subcommand: string): never {
  if (!subcommand) throw usageError("Missing expected argument '<subcommand>'", "system");
  throw new CliFailure(`Error: the stand-in does not model 'container system ${subcommand}'; set CONTAINER_STANDIN_SERVICE instead`, 1);
}
