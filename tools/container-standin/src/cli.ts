import { CliFailure, SERVICE_DOWN_TEXT, usageError } from "./cli-failure.js";
import { copyCommand } from "./copy-command.js";
import { execCommand } from "./exec-command.js";
import {
  createContainer,
  deleteContainers,
  inspectCommand,
  killContainers,
  listCommand,
  startContainer,
  stopContainers,
} from "./lifecycle-commands.js";
import { readModes, type StandinModes } from "./standin-modes.js";
import { systemStatus, systemUnsupported, systemVersion, versionLine, type CommandOutput } from "./system-commands.js";

/** Commands that need the API server (every one but `--version`, `system status` and `system version`). */
const API_COMMANDS = new Set(["run", "create", "start", "exec", "stop", "kill", "delete", "rm", "inspect", "list", "ls", "cp", "copy"]);

async function dispatch(args: readonly string[], modes: StandinModes): Promise<CommandOutput | number> {
  const [command, ...rest] = args;
  if (command === "--version") return { stdout: versionLine(modes), exitCode: 0 };
  if (command === undefined || command === "--help" || command === "-h")
    return { stdout: "OVERVIEW: A container platform for macOS (sbx stand-in)\n", exitCode: 0 };
  if (command === "system") {
    const [subcommand, ...options] = rest;
    if (subcommand === "status") return systemStatus(options, modes);
    if (subcommand === "version") return systemVersion(options, modes);
    return systemUnsupported(subcommand ?? "");
  }
  if (!API_COMMANDS.has(command)) {
    if (command.startsWith("-")) throw usageError(`Unknown option '${command}'`, "");
    // An unknown subcommand is looked up as a plugin (captured on 1.3.1).
    throw new CliFailure(`Plugin 'container-${command}' not found.`, 64);
  }
  if (modes.service !== "running") throw new CliFailure(SERVICE_DOWN_TEXT, 1);
  switch (command) {
    case "run":
    case "create":
      return createContainer(rest, command, modes);
    case "start":
      return startContainer(rest, modes);
    case "exec":
      return execCommand(rest, modes);
    case "stop":
      return stopContainers(rest, modes);
    case "kill":
      return killContainers(rest, modes);
    case "delete":
    case "rm":
      return deleteContainers(rest, modes);
    case "inspect":
      return inspectCommand(rest, modes);
    case "list":
    case "ls":
      return listCommand(rest, modes);
    default:
      return copyCommand(rest, modes);
  }
}

function exitAfterFlush(code: number): void {
  process.exitCode = code;
  process.stdout.write("", () => process.exit(code));
}

/** The stand-in's entry point: prints like the real CLI and exits with its codes (0, 1, 64, or the process's own). */
async function main(): Promise<void> {
  const modes = readModes();
  try {
    const outcome = await dispatch(process.argv.slice(2), modes);
    if (typeof outcome === "number") return exitAfterFlush(outcome);
    if (outcome.stdout) process.stdout.write(outcome.stdout);
    if (outcome.stderr) process.stderr.write(outcome.stderr);
    exitAfterFlush(outcome.exitCode);
  } catch (error) {
    if (error instanceof CliFailure) {
      process.stderr.write(`${error.message}\n`);
      return exitAfterFlush(error.exitCode);
    }
    process.stderr.write(`Error: internalError: "${error instanceof Error ? error.message : String(error)}"\n`);
    exitAfterFlush(1);
  }
}

void main();
