import { parseArgs, type ParseArgsConfig } from "node:util";
import { BackendUnavailableError, isSbxError } from "@sbx/core";
import { codeCommand } from "./commands/code.js";
import { doctorCommand } from "./commands/doctor.js";
import { gcCommand } from "./commands/gc.js";
import { listCommand } from "./commands/ls.js";
import { runCommand } from "./commands/run.js";
import { shellCommand } from "./commands/shell.js";
import { reportError, UsageError } from "./errors.js";
import { registerBundledAdapters } from "./target.js";
import type { CliEnvironment } from "./terminal.js";
import { outputMode } from "./terminal.js";

/** The `--help` text. */
export const USAGE = `sbx: run untrusted code in an isolated sandbox

Usage:
  sbx run [--target URI] [--network deny|allow|HOST,...] [--timeout 30s] [--env K=V]... [--upload FILE[:PATH]]... [--raw-output] -- COMMAND...
  sbx code [--target URI] [--language python] [--out-dir DIR] FILE|-
  sbx shell [--target URI] [--network ...] [--timeout 30s] [--env K=V]... [-- COMMAND...]   an interactive terminal in a sandbox
  sbx doctor                 which backends are usable here, and how to fix the others
  sbx ls [--all]             sbx sandboxes on the Docker engine (this host's; --all: every host's)
  sbx gc [--dry-run]         remove orphaned Docker sandboxes
  sbx mcp [--target URI] [--network ...] [--http PORT] [--host 127.0.0.1] [--max-sessions 16] [--idle-timeout 10m]   serve sandbox tools over MCP

Targets: docker://IMAGE, e2b://TEMPLATE, fake:// (not a security boundary), auto (default; or SBX_TARGET).
On a terminal, control characters in sandbox output are shown escaped (^[ for ESC); --raw-output passes them as they are.
Everywhere: --json (one JSON document on stdout), --quiet (no status lines or progress), --no-color (or NO_COLOR=1).
Exit status: the command's own for run and shell; 1 when code raised; 124 timeout; 125 sbx error; 2 usage.
`;

const GLOBAL_OPTIONS = {
  json: { type: "boolean" },
  quiet: { type: "boolean", short: "q" },
  color: { type: "boolean" },
  "no-color": { type: "boolean" },
  help: { type: "boolean", short: "h" },
} as const satisfies ParseArgsConfig["options"];

const SANDBOX_OPTIONS = {
  target: { type: "string", short: "t" },
  network: { type: "string" },
  timeout: { type: "string" },
  env: { type: "string", short: "e", multiple: true },
  "allow-fake": { type: "boolean" },
  "raw-output": { type: "boolean" },
} as const satisfies ParseArgsConfig["options"];

const COMMAND_OPTIONS: Record<string, ParseArgsConfig["options"]> = {
  run: { ...SANDBOX_OPTIONS, upload: { type: "string", short: "u", multiple: true } },
  code: { ...SANDBOX_OPTIONS, language: { type: "string", short: "l" }, "out-dir": { type: "string", short: "o" } },
  shell: { ...SANDBOX_OPTIONS },
  doctor: {},
  ls: { all: { type: "boolean", short: "a" } },
  gc: { "dry-run": { type: "boolean", short: "n" } },
  mcp: {
    target: { type: "string", short: "t" },
    network: { type: "string" },
    http: { type: "string" },
    host: { type: "string" },
    "allow-fake": { type: "boolean" },
    "max-sessions": { type: "string" },
    "idle-timeout": { type: "string" },
  },
};

/** Docker listing failures that are not sbx errors (engine down) become `BackendUnavailableError` with a remedy. */
function asDockerError(error: unknown): unknown {
  if (isSbxError(error)) return error;
  return new BackendUnavailableError({
    backend: "docker",
    cause: error,
    remedy: "Start the Docker Engine (or set DOCKER_HOST); `sbx doctor` shows what is usable.",
    message: `Cannot reach the Docker engine: ${error instanceof Error ? error.message : String(error)}`,
  });
}

/**
 * Runs the `sbx` command line and returns the exit status. Never throws: every failure is printed
 * (with its remedy) and mapped to an exit status.
 */
export async function runCli(environment: CliEnvironment): Promise<number> {
  const [command, ...rest] = environment.argv;
  let mode = outputMode({}, environment);
  try {
    if (command === undefined || command === "--help" || command === "-h" || command === "help") {
      environment.stdout.write(USAGE);
      return command === undefined ? 2 : 0;
    }
    if (command === "--version" || command === "-v") {
      environment.stdout.write("sbx 0.1.0\n");
      return 0;
    }
    const commandOptions = COMMAND_OPTIONS[command];
    if (!commandOptions) throw new UsageError(`Unknown command ${JSON.stringify(command)}. Commands: run, code, shell, doctor, ls, gc, mcp.`);
    let parsed;
    try {
      parsed = parseArgs({ args: [...rest], options: { ...GLOBAL_OPTIONS, ...commandOptions }, allowPositionals: true, strict: true });
    } catch (error) {
      throw new UsageError(error instanceof Error ? error.message.replace(/\. To specify a positional argument.*$/s, ".") : String(error));
    }
    const values = parsed.values as Record<string, unknown>;
    mode = outputMode(
      {
        json: values.json === true,
        quiet: values.quiet === true,
        color: values["no-color"] === true ? false : (values.color as boolean | undefined),
      },
      environment,
    );
    if (values.help === true) {
      environment.stdout.write(USAGE);
      return 0;
    }
    registerBundledAdapters();
    switch (command) {
      case "run":
        return await runCommand(environment, mode, values, parsed.positionals);
      case "code":
        return await codeCommand(environment, mode, values, parsed.positionals);
      case "shell":
        return await shellCommand(environment, mode, values, parsed.positionals);
      case "doctor":
        return await doctorCommand(environment, mode);
      case "ls":
        return await listCommand(environment, mode, values).catch((error: unknown) => {
          throw asDockerError(error);
        });
      case "gc":
        return await gcCommand(environment, mode, values).catch((error: unknown) => {
          throw asDockerError(error);
        });
      default: {
        // Loaded lazily so the other commands do not pay for the MCP SDK.
        const { mcpCommand } = await import("./commands/mcp.js");
        return await mcpCommand(environment, mode, values);
      }
    }
  } catch (error) {
    return reportError(environment, mode, error);
  }
}
