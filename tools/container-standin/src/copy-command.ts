import { resolve } from "node:path";
import { parseArguments } from "./arguments.js";
import { CliFailure, runtimeError, usageError } from "./cli-failure.js";
import { inspectContainers } from "./container-records.js";
import { docker, dockerNameOf } from "./docker-cli.js";
import type { StandinModes } from "./standin-modes.js";
import type { CommandOutput } from "./system-commands.js";

function containerSide(text: string): { id: string; path: string } | undefined {
  const parts = text.split(":");
  if (parts.length !== 2) return undefined;
  return { id: parts[0]!, path: parts[1]! };
}

/**
 * `container cp <host> <id>:/abs` and back (1.0.0+): the container must be running, the container side is exactly
 * `id:/absolute`, host paths containing `:` are refused. From 1.2 it prints the destination. With
 * `CONTAINER_STANDIN_CP=silent` the upload exits 0 and copies nothing (apple/container#2258).
 */
export async function copyCommand(args: readonly string[], modes: StandinModes): Promise<CommandOutput> {
  const parsed = parseArguments(args, [{ names: ["--debug"], value: false }], "cp");
  const [source, destination] = parsed.positionals;
  if (!source || !destination) throw usageError("Missing expected argument '<source>'", "cp");
  const from = source.includes(":") ? containerSide(source) : undefined;
  const to = destination.includes(":") ? containerSide(destination) : undefined;
  if ((source.includes(":") && !from) || (destination.includes(":") && !to)) throw runtimeError("invalidArgument", "invalid path given");
  if ((from && to) || (!from && !to)) throw runtimeError("invalidArgument", "copying requires exactly one container path");
  const side = (from ?? to)!;
  if (!side.path.startsWith("/")) throw runtimeError("invalidArgument", "invalid path given");
  const [container] = await inspectContainers(modes, [dockerNameOf(side.id)]);
  if (!container) throw runtimeError("notFound", `container ${side.id} not found`);
  if (container.status.state !== "running") throw runtimeError("invalidState", `container ${side.id} is not running`);
  const printed = modes.version.startsWith("1.0") || modes.version.startsWith("1.1") ? "" : `${destination}\n`;
  if (to && modes.copy === "silent") return { stdout: printed, exitCode: 0 };
  const host = resolve(from ? destination : source);
  const result = await docker(modes, ["cp", from ? `${dockerNameOf(from.id)}:${from.path}` : host, to ? `${dockerNameOf(to.id)}:${to.path}` : host]);
  if (result.exitCode !== 0) throw new CliFailure(`Error: internalError: "failed to copy" (cause: "${result.stderr.trim()}")`, 1);
  return { stdout: printed, exitCode: 0 };
}
