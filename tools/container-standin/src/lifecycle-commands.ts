import { existsSync } from "node:fs";
import { hasFlag, lastValue, parseArguments } from "./arguments.js";
import { CliFailure, runtimeError, usageError } from "./cli-failure.js";
import { planCreate } from "./container-configuration.js";
import { inspectContainers, listContainers, type AppleContainer } from "./container-records.js";
import { docker, dockerNameOf, LABEL_CONFIGURATION, LABEL_ID, LABEL_NAMESPACE } from "./docker-cli.js";
import type { StandinModes } from "./standin-modes.js";
import { swiftJson } from "./swift-json.js";
import type { CommandOutput } from "./system-commands.js";

function ok(stdout: string): CommandOutput {
  return { stdout, exitCode: 0 };
}

/** `run -d` / `create`: validates like the real CLI, then starts (or creates) the Docker container standing in for the VM. */
export async function createContainer(args: readonly string[], command: "run" | "create", modes: StandinModes): Promise<CommandOutput> {
  const plan = planCreate(args, command, modes, process.cwd());
  if (command === "run" && !plan.detach) throw new CliFailure("Error: the stand-in runs containers detached only (pass -d)", 1);
  const labels = [
    `--label=${LABEL_NAMESPACE}=${modes.namespace}`,
    `--label=${LABEL_ID}=${plan.id}`,
    `--label=${LABEL_CONFIGURATION}=${JSON.stringify(plan.configuration)}`,
  ];
  const verb = command === "run" ? ["run", "-d"] : ["create"];
  const result = await docker(modes, [
    ...verb,
    `--name=${dockerNameOf(plan.id)}`,
    ...(plan.remove ? ["--rm"] : []),
    ...labels,
    ...plan.dockerArguments,
  ]);
  if (result.exitCode !== 0) {
    // The name is taken (docker's "Conflict"): the existing container is left alone.
    if (/is already in use by container|Conflict/.test(result.stderr)) throw new CliFailure(`Error: container with id ${plan.id} already exists`, 1);
    // run deletes the half-created container in its catch.
    await docker(modes, ["rm", "-f", dockerNameOf(plan.id)]);
    if (/No such image|pull access denied|not found: manifest unknown/i.test(result.stderr))
      throw runtimeError(
        "notFound",
        `image not found: ${String(plan.configuration.image && (plan.configuration.image as { reference: string }).reference)}`,
      );
    throw runtimeError("internalError", `failed to ${command} container: ${result.stderr.trim()}`);
  }
  return ok(`${plan.id}\n`);
}

/** `start <id>`: fails when a virtiofs mount source has disappeared, as `ContainerStart.swift` checks. */
export async function startContainer(args: readonly string[], modes: StandinModes): Promise<CommandOutput> {
  const parsed = parseArguments(
    args,
    [
      { names: ["-a", "--attach"], value: false },
      { names: ["-i", "--interactive"], value: false },
      { names: ["--debug"], value: false },
    ],
    "start",
  );
  const id = parsed.positionals[0];
  if (!id) throw usageError("Missing expected argument '<container-id>'", "start");
  const [container] = await inspectContainers(modes, [dockerNameOf(id)]);
  if (!container) throw runtimeError("notFound", `container not found: ${id}`);
  for (const mount of container.configuration.mounts as Array<{ type: Record<string, unknown>; source: string }>) {
    if ("virtiofs" in mount.type && !existsSync(mount.source))
      throw runtimeError("invalidArgument", `mount source path '${mount.source}' does not exist`);
  }
  const result = await docker(modes, ["start", dockerNameOf(id)]);
  if (result.exitCode !== 0) throw runtimeError("internalError", `failed to start container ${id}: ${result.stderr.trim()}`);
  return ok(`${id}\n`);
}

async function targets(parsed: { positionals: string[] }, all: boolean, command: string, modes: StandinModes): Promise<string[]> {
  if (all && parsed.positionals.length > 0) throw usageError("explicitly supplied container IDs conflict with the --all flag", command);
  if (!all && parsed.positionals.length === 0) throw usageError("no containers specified and --all not supplied", command);
  return all ? (await listContainers(modes)).map((container) => container.id) : [...new Set(parsed.positionals)];
}

/** `stop [-s SIG] [-t secs] <ids…> | --all`: idempotent on a stopped container; a missing one fails. */
export async function stopContainers(args: readonly string[], modes: StandinModes): Promise<CommandOutput> {
  const parsed = parseArguments(
    args,
    [
      { names: ["-s", "--signal"], value: true },
      { names: ["-t", "--time"], value: true },
      { names: ["-a", "--all"], value: false },
    ],
    "stop",
  );
  const ids = await targets(parsed, hasFlag(parsed, "--all"), "stop", modes);
  const found = new Map((await inspectContainers(modes, ids.map(dockerNameOf))).map((container) => [container.id, container]));
  const stopped: string[] = [];
  const errors: string[] = [];
  await Promise.all(
    ids.map(async (id) => {
      const container = found.get(id);
      if (!container) return void errors.push(`internalError: "failed to stop container" (cause: "notFound: "container with ID ${id} not found"")`);
      if (container.status.state === "running") {
        const signal = lastValue(parsed, "--signal");
        await docker(modes, ["stop", `--time=${lastValue(parsed, "--time") ?? "5"}`, ...(signal ? [`--signal=${signal}`] : []), dockerNameOf(id)]);
      }
      stopped.push(id);
    }),
  );
  return finish(stopped, errors, "stop");
}

/** `kill [-s SIG] <ids…> | --all`: signals init only (default KILL); killing init stops the container. */
export async function killContainers(args: readonly string[], modes: StandinModes): Promise<CommandOutput> {
  const parsed = parseArguments(
    args,
    [
      { names: ["-s", "--signal"], value: true },
      { names: ["-a", "--all"], value: false },
    ],
    "kill",
  );
  const ids = await targets(parsed, hasFlag(parsed, "--all"), "kill", modes);
  const found = new Map((await inspectContainers(modes, ids.map(dockerNameOf))).map((container) => [container.id, container]));
  const killed: string[] = [];
  const errors: string[] = [];
  const signal = (lastValue(parsed, "--signal") ?? "KILL").toUpperCase().replace(/^SIG/, "");
  await Promise.all(
    ids.map(async (id) => {
      const container = found.get(id);
      if (!container) return void errors.push(`notFound: "container ${id} not found"`);
      if (container.status.state !== "running") return void errors.push(`invalidState: "container ${id} is not running"`);
      const result = await docker(modes, ["kill", `--signal=${/^\d+$/.test(signal) ? signal : `SIG${signal}`}`, dockerNameOf(id)]);
      if (result.exitCode !== 0) return void errors.push(`internalError: "${result.stderr.trim()}"`);
      killed.push(id);
    }),
  );
  return finish(killed, errors, "kill");
}

/** `delete | rm [-f] <ids…> | --all`: a running container without `-f` is refused; a missing one fails with `not found`. */
export async function deleteContainers(args: readonly string[], modes: StandinModes): Promise<CommandOutput> {
  const parsed = parseArguments(
    args,
    [
      { names: ["-f", "--force"], value: false },
      { names: ["-a", "--all"], value: false },
    ],
    "delete",
  );
  const force = hasFlag(parsed, "--force");
  const ids = await targets(parsed, hasFlag(parsed, "--all"), "delete", modes);
  const deleted: string[] = [];
  const errors: string[] = [];
  if (force && !hasFlag(parsed, "--all")) {
    // One docker call: a forced delete needs no state first (a missing container is docker's "No such container").
    await Promise.all(
      ids.map(async (id) => {
        const result = await docker(modes, ["rm", "-f", dockerNameOf(id)]);
        if (result.exitCode === 0 && !/No such container/i.test(result.stderr)) return void deleted.push(id);
        if (/No such container/i.test(result.stderr) || result.exitCode === 0)
          return void errors.push(`internalError: "failed to delete container" (cause: "notFound: "container with ID ${id} not found"")`);
        errors.push(`internalError: "${result.stderr.trim()}"`);
      }),
    );
    return finish(deleted, errors, "delete");
  }
  const found = new Map((await inspectContainers(modes, ids.map(dockerNameOf))).map((container) => [container.id, container]));
  await Promise.all(
    ids.map(async (id) => {
      const container = found.get(id);
      if (!container) return void errors.push(`internalError: "failed to delete container" (cause: "notFound: "container with ID ${id} not found"")`);
      if (container.status.state === "running" && !force) {
        if (hasFlag(parsed, "--all")) return;
        return void errors.push(`invalidState: "container ${id} is running and can not be deleted"`);
      }
      const result = await docker(modes, ["rm", "-f", dockerNameOf(id)]);
      if (result.exitCode !== 0 && !/No such container/i.test(result.stderr)) return void errors.push(`internalError: "${result.stderr.trim()}"`);
      deleted.push(id);
    }),
  );
  return finish(deleted, errors, "delete");
}

function finish(done: readonly string[], errors: readonly string[], command: string): CommandOutput {
  const stdout = done.map((id) => `${id}\n`).join("");
  if (errors.length === 0) return ok(stdout);
  const text = errors.length === 1 ? `Error: ${errors[0]}` : `Error: failed to ${command} one or more containers\n${errors.join("\n")}`;
  return { stdout, stderr: `${text}\n`, exitCode: 1 };
}

/** `inspect <ids…>`: a pretty JSON array; unknown ids fail (1.0.0+) naming them. */
export async function inspectCommand(args: readonly string[], modes: StandinModes): Promise<CommandOutput> {
  const parsed = parseArguments(args, [{ names: ["--debug"], value: false }], "inspect");
  if (parsed.positionals.length === 0) throw usageError("Missing expected argument '<container-ids> ...'", "inspect");
  const found = await inspectContainers(modes, parsed.positionals.map(dockerNameOf));
  const missing = parsed.positionals.filter((id) => !found.some((container) => container.id === id));
  if (missing.length > 0) {
    if (modes.generation === "1.4" || modes.version.startsWith("1.3")) throw new CliFailure(`Error: container not found: ${missing.join(", ")}`, 1);
    throw runtimeError("notFound", `container not found: ${missing.join(", ")}`);
  }
  const ordered = parsed.positionals.map((id) => found.find((container) => container.id === id)!);
  return ok(render(ordered, modes, true) + "\n");
}

/** `list | ls [-a] [--format json|table] [-q]`: running containers only unless `-a`; JSON is compact. */
export async function listCommand(args: readonly string[], modes: StandinModes): Promise<CommandOutput> {
  const parsed = parseArguments(
    args,
    [
      { names: ["-a", "--all"], value: false },
      { names: ["--format"], value: true },
      { names: ["-q", "--quiet"], value: false },
    ],
    "list",
  );
  const containers = (await listContainers(modes)).filter((container) => hasFlag(parsed, "--all") || container.status.state === "running");
  containers.sort((left, right) => (left.id < right.id ? -1 : 1));
  if (hasFlag(parsed, "--quiet")) return ok(containers.map((container) => `${container.id}\n`).join(""));
  const format = lastValue(parsed, "--format") ?? "table";
  if (format === "json") return ok(render(containers, modes, false) + "\n");
  if (format !== "table") throw usageError(`The value '${format}' is invalid for '--format <format>'`, "list");
  const header = "ID  IMAGE  OS  ARCH  STATE  IP  CPUS  MEMORY  STARTED\n";
  return ok(
    header +
      containers
        .map(
          (container) =>
            `${container.id}  ${String((container.configuration.image as { reference: string }).reference)}  linux  arm64  ${container.status.state}\n`,
        )
        .join(""),
  );
}

function render(containers: readonly AppleContainer[], modes: StandinModes, pretty: boolean): string {
  return swiftJson(containers, { pretty, escapeSlashes: modes.generation === "1.0" });
}
