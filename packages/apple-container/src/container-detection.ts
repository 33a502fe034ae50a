import { accessSync, constants } from "node:fs";
import { release } from "node:os";
import { delimiter, isAbsolute, join } from "node:path";
import { runCli, type ContainerCli } from "./container-cli.js";
import {
  isSupportedVersion,
  parseServiceStatus,
  parseServiceStatusTable,
  parseVersionLine,
  SUPPORTED_VERSIONS,
  type CliVersion,
  type ServiceStatus,
} from "./container-output.js";
import { START_SERVICE_REMEDY } from "./map-apple-container-error.js";

/** Where Apple's signed installer puts the CLI. */
export const DEFAULT_BINARY_PATH = "/usr/local/bin/container";
/** Where to get the CLI. */
export const INSTALL_REMEDY =
  "Install Apple's container from https://github.com/apple/container/releases (the signed .pkg), then run `container system start`.";

/** What detection found: usable, or why not and what to do. */
export type Detection =
  | { readonly usable: true; readonly cli: ContainerCli; readonly version: CliVersion; readonly status: ServiceStatus; readonly reason: string }
  | { readonly usable: false; readonly reason: string; readonly remedy: string };

/** The platform check: macOS 26 or later (Darwin 25+) on Apple silicon; a reason when not. */
export function platformProblem(
  platform: string = process.platform,
  arch: string = process.arch,
  darwinRelease: string = release(),
): string | undefined {
  if (platform !== "darwin") return `Apple's container runs only on macOS 26 or later on Apple silicon; this is ${platform}.`;
  if (arch !== "arm64") return `Apple's container runs only on Apple silicon; this Mac is ${arch}.`;
  const major = Number(darwinRelease.split(".")[0]);
  if (!(major >= 25))
    return `Apple's container needs macOS 26 or later; this Mac runs Darwin ${darwinRelease} (macOS ${major >= 20 ? major - 9 : "before 11"}).`;
  return undefined;
}

function executable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** The CLI's path: the setting, else `container` on PATH, else `/usr/local/bin/container`; undefined when none is executable. */
export function findBinary(setting: string | undefined, environment: NodeJS.ProcessEnv = process.env): string | undefined {
  if (setting !== undefined)
    return isAbsolute(setting) ? (executable(setting) ? setting : undefined) : findBinary(undefined, { PATH: environment.PATH, NAME: setting });
  const name = environment.NAME ?? "container";
  for (const directory of (environment.PATH ?? "").split(delimiter)) {
    if (directory && executable(join(directory, name))) return join(directory, name);
  }
  return name === "container" && executable(DEFAULT_BINARY_PATH) ? DEFAULT_BINARY_PATH : undefined;
}

/**
 * Detects the backend without changing anything: the platform, the binary, its version (1.0.0 through 1.4.x) and
 * `container system status`. Never starts the service or installs a kernel (the user runs `container system start`).
 */
export async function detectContainer(options: {
  binary: string | undefined;
  environment: Readonly<Record<string, string>>;
  checkPlatform: boolean;
  timeoutMs: number;
  signal?: AbortSignal;
}): Promise<Detection> {
  if (options.checkPlatform) {
    const problem = platformProblem();
    if (problem)
      return {
        usable: false,
        reason: problem,
        remedy:
          "Use another backend here (docker:// with a Docker Engine, or e2b:// / modal:// with an account); apple-container:// needs a Mac with Apple silicon on macOS 26.",
      };
  }
  const binary = findBinary(options.binary);
  if (!binary) {
    const where = options.binary ?? `container on PATH or ${DEFAULT_BINARY_PATH}`;
    return { usable: false, reason: `The container CLI was not found (${where}).`, remedy: INSTALL_REMEDY };
  }
  const cli: ContainerCli = { binary, environment: { ...process.env, ...options.environment } };
  const versionResult = await runCli(cli, ["--version"], { timeoutMs: options.timeoutMs, signal: options.signal });
  const version = parseVersionLine(versionResult.stdout);
  if (versionResult.exitCode !== 0 || !version) {
    return {
      usable: false,
      reason: `${binary} --version did not print a container CLI version (exit ${String(versionResult.exitCode)}): ${versionResult.stdout.trim() || versionResult.stderr.trim()}`,
      remedy: INSTALL_REMEDY,
    };
  }
  if (!isSupportedVersion(version)) {
    return {
      usable: false,
      reason: `container ${version.version} is outside the versions sbx is tested with (${SUPPORTED_VERSIONS.text}).`,
      remedy: `Install a container release from ${SUPPORTED_VERSIONS.text} (https://github.com/apple/container/releases), or an @sbx/apple-container that supports ${version.version}.`,
    };
  }
  let statusResult = await runCli(cli, ["system", "status", "--format", "json"], { timeoutMs: options.timeoutMs, signal: options.signal });
  let status = parseServiceStatus(statusResult.stdout);
  if (!status && statusResult.exitCode === 64) {
    // A release whose `system status` takes no --format: read its table instead.
    statusResult = await runCli(cli, ["system", "status"], { timeoutMs: options.timeoutMs, signal: options.signal });
    status = parseServiceStatusTable(`${statusResult.stdout}\n${statusResult.stderr}`);
  }
  if (!status) {
    return {
      usable: false,
      reason: `container system status --format json printed no status it understands (exit ${String(statusResult.exitCode)}): ${statusResult.stderr.trim() || statusResult.stdout.trim()}`,
      remedy: START_SERVICE_REMEDY,
    };
  }
  if (statusResult.exitCode !== 0 || status.status !== "running") {
    return {
      usable: false,
      reason: `The container system service is ${status.status} (container ${version.version}).`,
      remedy: START_SERVICE_REMEDY,
    };
  }
  return {
    usable: true,
    cli,
    version,
    status,
    reason: `container ${version.version} at ${binary}, service running (API server ${status.serverVersion ?? "version unknown"}, ${status.shape} status shape).`,
  };
}
