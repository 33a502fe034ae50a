import { existsSync, statSync } from "node:fs";
import { resolve } from "node:path";
import { allValues, hasFlag, lastValue, parseArguments, type OptionSpec } from "./arguments.js";
import { CliFailure, runtimeError, usageError } from "./cli-failure.js";
import type { StandinModes } from "./standin-modes.js";

/** The options `run` and `create` accept (Flags.swift); the ones the stand-in does not model are accepted and ignored. */
export const CREATE_OPTIONS: readonly OptionSpec[] = [
  { names: ["--name"], value: true },
  { names: ["-l", "--label"], value: true },
  { names: ["--network"], value: true },
  { names: ["--no-dns"], value: false },
  { names: ["--dns"], value: true },
  { names: ["-c", "--cpus"], value: true },
  { names: ["-m", "--memory"], value: true },
  { names: ["-v", "--volume"], value: true },
  { names: ["--mount"], value: true },
  { names: ["--tmpfs"], value: true },
  { names: ["--read-only"], value: false },
  { names: ["-u", "--user"], value: true },
  { names: ["-e", "--env"], value: true },
  { names: ["-w", "--workdir", "--cwd"], value: true },
  { names: ["--entrypoint"], value: true },
  { names: ["--init"], value: false },
  { names: ["--cap-add"], value: true },
  { names: ["--cap-drop"], value: true },
  { names: ["--ulimit"], value: true },
  { names: ["--rm", "--remove"], value: false },
  { names: ["-d", "--detach"], value: false },
  { names: ["-i", "--interactive"], value: false },
  { names: ["-t", "--tty"], value: false },
  { names: ["--progress"], value: true },
  { names: ["--platform"], value: true },
  { names: ["--arch", "-a"], value: true },
  { names: ["--os"], value: true },
  { names: ["--rosetta"], value: false },
  { names: ["--debug"], value: false },
];

const NAME_PATTERN = /^[a-zA-Z0-9][a-zA-Z0-9_.-]+$/;
const MIB = 1024 * 1024;
const UNIT_POWERS: Record<string, number> = { b: 0, k: 1, m: 2, g: 3, t: 4, p: 5 };

/** The Apple `ContainerConfiguration` the stand-in stores and `inspect` prints (§4.1 of the reference). */
export type AppleConfiguration = Record<string, unknown> & { id: string; labels: Record<string, string> };

/** What `run`/`create` produce: the Docker arguments and the configuration to store. */
export interface CreatePlan {
  readonly id: string;
  readonly detach: boolean;
  readonly remove: boolean;
  readonly dockerArguments: string[];
  readonly configuration: AppleConfiguration;
}

/** `--memory`: units b/k/m/g/t/p (each optionally followed by b or ib), powers of 1024, a bare number is bytes, floored to MiB. */
export function parseMemory(text: string): number {
  const match = /^(\d+(?:\.\d+)?)([bkmgtp])?(b|ib)?$/i.exec(text.trim());
  if (!match) throw usageError(`invalid memory value '${text}'`, "run");
  const bytes = Number(match[1]) * 1024 ** UNIT_POWERS[(match[2] ?? "b").toLowerCase()]!;
  return Math.floor(bytes / MIB) * MIB;
}

function parseLabel(text: string): [string, string] {
  const parts = text.split("=");
  if (parts.length > 2) throw runtimeError("invalidArgument", `invalid label format ${text}`);
  return [parts[0]!, parts[1] ?? ""];
}

function existingDirectory(source: string, cwd: string): string {
  const absolute = resolve(cwd, source);
  if (!existsSync(absolute)) throw runtimeError("invalidArgument", `path '${source}' does not exist`);
  if (!statSync(absolute).isDirectory()) throw runtimeError("invalidArgument", `path '${source}' is not a directory`);
  return absolute;
}

interface MountPlan {
  readonly record: Record<string, unknown>;
  readonly docker: string;
}

function mountOf(text: string, cwd: string): MountPlan {
  const fields = new Map<string, string>();
  for (const part of text.split(",")) {
    const [key, value] = part.split("=", 2) as [string, string | undefined];
    const known = ["type", "source", "src", "destination", "dst", "target", "readonly", "ro", "size", "mode"];
    if (!known.includes(key)) throw runtimeError("invalidArgument", `unknown directive ${key} in --mount`);
    fields.set(key === "src" ? "source" : key === "dst" || key === "target" ? "destination" : key === "ro" ? "readonly" : key, value ?? "");
  }
  const type = fields.get("type") ?? "virtiofs";
  const destination = fields.get("destination");
  if (!destination) throw runtimeError("invalidArgument", "mount destination is required");
  const readOnly = fields.has("readonly") && fields.get("readonly") !== "false";
  if (type === "tmpfs") {
    const options: string[] = [];
    const size = fields.get("size");
    const mode = fields.get("mode");
    let docker = `type=tmpfs,destination=${destination}`;
    if (size) {
      const bytes = parseMemory(size);
      options.push(`size=${bytes}`);
      docker += `,tmpfs-size=${bytes}`;
    }
    if (mode) {
      options.push(`mode=${mode}`);
      docker += `,tmpfs-mode=${mode}`;
    }
    if (readOnly) options.push("ro");
    return { record: { type: { tmpfs: {} }, source: "tmpfs", destination, options }, docker };
  }
  if (type !== "bind" && type !== "virtiofs") throw runtimeError("invalidArgument", `unsupported mount type ${type} in the stand-in`);
  const source = existingDirectory(fields.get("source") ?? "", cwd);
  return {
    record: { type: { virtiofs: {} }, source, destination, options: readOnly ? ["ro"] : [] },
    docker: `type=bind,source=${source},target=${destination}${readOnly ? ",readonly" : ""}`,
  };
}

function volumeOf(text: string, cwd: string): MountPlan {
  const [source, destination, options] = text.split(":");
  if (!source || !destination) throw runtimeError("invalidArgument", `invalid volume ${text}`);
  if (!source.includes("/") && source !== "." && source !== "..")
    throw runtimeError("invalidArgument", "named volumes are not modelled by the stand-in");
  const absolute = resolve(cwd, source);
  if (!existsSync(absolute)) throw runtimeError("invalidArgument", `path '${source}' does not exist`);
  const list = options ? options.split(",") : [];
  const readOnly = list.includes("ro");
  return {
    record: { type: { virtiofs: {} }, source: absolute, destination, options: list },
    docker: `type=bind,source=${absolute},target=${destination}${readOnly ? ",readonly" : ""}`,
  };
}

function userRecord(user: string | undefined): Record<string, unknown> {
  return user === undefined ? { id: { gid: 0, uid: 0 } } : { raw: { userString: user } };
}

/**
 * Validates `run`/`create` arguments as the real CLI does and plans the Docker container standing in for the VM.
 * Rejects what the real CLI rejects (name grammar, `=` in a label value, `none` beside another network, fractional
 * CPUs, memory below 200 MiB, mount grammar and missing sources).
 */
export function planCreate(args: readonly string[], command: "run" | "create", modes: StandinModes, cwd: string): CreatePlan {
  const parsed = parseArguments(args, CREATE_OPTIONS, command, 1);
  const [image, ...processArguments] = parsed.positionals;
  if (!image) throw usageError("Missing expected argument '<image>'", command);
  const name = lastValue(parsed, "--name") ?? crypto.randomUUID().toLowerCase();
  if (!NAME_PATTERN.test(name) || name.length > 63) throw new CliFailure(`Error: container ID ${name} is not a valid container ID`, 1);
  const labels: Record<string, string> = {};
  for (const text of allValues(parsed, "--label")) {
    const [key, value] = parseLabel(text);
    labels[key] = value;
  }
  const networks = allValues(parsed, "--network");
  if (networks.includes("none") && networks.length > 1)
    throw runtimeError("invalidArgument", "no other networks may be created along with network none");
  if (hasFlag(parsed, "--no-dns") && hasFlag(parsed, "--dns")) throw usageError("--no-dns and --dns cannot be used together", command);
  const cpusText = lastValue(parsed, "--cpus");
  if (cpusText !== undefined && !/^\d+$/.test(cpusText)) throw usageError(`The value '${cpusText}' is invalid for '-c <cpus>'`, command);
  const cpus = cpusText === undefined ? 4 : Number(cpusText);
  const memoryText = lastValue(parsed, "--memory");
  const memoryInBytes = memoryText === undefined ? 1024 * MIB : parseMemory(memoryText);
  if (memoryInBytes < 200 * MIB) throw runtimeError("invalidArgument", `minimum memory amount allowed is 200 MiB (got ${memoryInBytes} bytes)`);
  const mounts = [
    ...allValues(parsed, "--tmpfs").map((path) => mountOf(`type=tmpfs,destination=${path}`, cwd)),
    ...allValues(parsed, "--volume").map((text) => volumeOf(text, cwd)),
    ...allValues(parsed, "--mount").map((text) => mountOf(text, cwd)),
  ];
  const user = lastValue(parsed, "--user");
  const workdir = lastValue(parsed, "--workdir");
  const entrypoint = lastValue(parsed, "--entrypoint");
  const environment = allValues(parsed, "--env");
  const noNetwork = networks.includes("none");
  const attachment = noNetwork ? [] : (networks.length > 0 ? networks : ["default"]).map((network) => ({ network, options: { hostname: name } }));
  const dockerNetwork = noNetwork ? "none" : networks.length === 0 || networks[0] === "default" ? modes.defaultNetwork : networks[0]!;
  const configuration: AppleConfiguration = {
    capAdd: allValues(parsed, "--cap-add"),
    capDrop: allValues(parsed, "--cap-drop"),
    creationDate: new Date().toISOString().replace(/\.\d{3}Z$/, "Z"),
    id: name,
    image: {
      descriptor: {
        digest: "sha256:0000000000000000000000000000000000000000000000000000000000000000",
        mediaType: "application/vnd.oci.image.index.v1+json",
        size: 0,
      },
      reference: image,
    },
    initProcess: {
      arguments: entrypoint ? processArguments : processArguments.slice(1),
      environment,
      executable: entrypoint ?? processArguments[0] ?? "",
      rlimits: [],
      supplementalGroups: [],
      terminal: hasFlag(parsed, "--tty"),
      user: userRecord(user),
      workingDirectory: workdir ?? "/",
    },
    labels,
    mounts: mounts.map((mount) => mount.record),
    networks: attachment,
    platform: { architecture: "arm64", os: "linux" },
    publishedPorts: [],
    publishedSockets: [],
    readOnly: hasFlag(parsed, "--read-only"),
    resources: { cpuOverhead: 1, cpus, memoryInBytes },
    rosetta: false,
    runtimeHandler: "container-runtime-linux",
    ssh: false,
    sysctls: {},
    useInit: hasFlag(parsed, "--init"),
    virtualization: false,
  };
  if (!hasFlag(parsed, "--no-dns") && !noNetwork) configuration.dns = { nameservers: [], options: [], searchDomains: [] };
  const dockerArguments = [
    `--network=${dockerNetwork}`,
    `--memory=${memoryInBytes}`,
    "--memory-swap=" + String(memoryInBytes),
    ...(cpusText === undefined ? [] : [`--cpus=${cpus}`]),
    ...mounts.map((mount) => `--mount=${mount.docker}`),
    ...(hasFlag(parsed, "--read-only") ? ["--read-only"] : []),
    ...(user === undefined ? [] : [`--user=${user}`]),
    ...(workdir === undefined ? [] : [`--workdir=${workdir}`]),
    ...(entrypoint === undefined ? [] : [`--entrypoint=${entrypoint}`]),
    ...(hasFlag(parsed, "--init") ? ["--init"] : []),
    ...environment.map((entry) => `--env=${entry}`),
    ...allValues(parsed, "--cap-add").map((cap) => `--cap-add=${cap}`),
    ...allValues(parsed, "--cap-drop").map((cap) => `--cap-drop=${cap}`),
    ...allValues(parsed, "--ulimit").map((limit) => `--ulimit=${limit}`),
    `--hostname=${name.slice(0, 63)}`,
  ];
  return {
    id: name,
    detach: hasFlag(parsed, "--detach"),
    remove: hasFlag(parsed, "--rm"),
    dockerArguments: [...dockerArguments, image, ...processArguments],
    configuration,
  };
}
