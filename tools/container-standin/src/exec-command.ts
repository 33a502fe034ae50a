import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { allValues, hasFlag, lastValue, parseArguments, type OptionSpec } from "./arguments.js";
import { CliFailure, usageError } from "./cli-failure.js";
import { docker, dockerNameOf } from "./docker-cli.js";
import type { StandinModes } from "./standin-modes.js";

const EXEC_OPTIONS: readonly OptionSpec[] = [
  { names: ["-i", "--interactive"], value: false },
  { names: ["-t", "--tty"], value: false },
  { names: ["-d", "--detach"], value: false },
  { names: ["-u", "--user"], value: true },
  { names: ["--uid"], value: true },
  { names: ["--gid"], value: true },
  { names: ["-e", "--env"], value: true },
  { names: ["--env-file"], value: true },
  { names: ["-w", "--workdir", "--cwd"], value: true },
  { names: ["--ulimit"], value: true },
  { names: ["--debug"], value: false },
];

/** Linux signal numbers, as the real CLI reports them in its "failed to send signal" line. */
const SIGNAL_NUMBERS: Record<string, number> = { SIGINT: 2, SIGTERM: 15, SIGUSR1: 10, SIGUSR2: 12 };
/** Docker CLI texts of a failed exec start, held back from the process's stderr and translated. */
const DOCKER_FAILURE = /^(OCI runtime exec failed|Error response from daemon|Error: No such container)/;
const DOCKER_FAILURE_PREFIXES = ["OCI runtime exec failed", "Error response from daemon", "Error: No such container"];

/** Whether `head` may still turn out to be docker's failure text (it is a prefix of one, or starts with one). */
function mayBeDockerFailure(head: string): boolean {
  return DOCKER_FAILURE.test(head) || DOCKER_FAILURE_PREFIXES.some((prefix) => prefix.startsWith(head));
}

function environmentOf(parsed: ReturnType<typeof parseArguments>): string[] {
  const fromFiles = allValues(parsed, "--env-file").flatMap((file) =>
    readFileSync(file, "utf8")
      .split("\n")
      .filter((line) => line.trim() && !line.startsWith("#")),
  );
  return [...fromFiles, ...allValues(parsed, "--env")].map((entry) => (entry.includes("=") ? entry : `${entry}=${process.env[entry] ?? ""}`));
}

/**
 * Refuses an `-e`/`--env-file` key the container's init environment already has: the real CLI appends it without
 * removing the old entry (the #1212 fix covered `run` only), so `getenv()` in a non-shell program sees the old value.
 * Docker would override it, which would hide the bug from an adapter tested here; failing loudly does not.
 */
async function refuseDuplicateKeys(modes: StandinModes, id: string, environment: readonly string[]): Promise<void> {
  if (environment.length === 0) return;
  const result = await docker(modes, ["inspect", "--type=container", "--format", "{{json .Config.Env}}", dockerNameOf(id)]);
  if (result.exitCode !== 0) return;
  const existing = new Set(((JSON.parse(result.stdout) as string[] | null) ?? []).map((entry) => entry.split("=", 1)[0]));
  const duplicated = environment.map((entry) => entry.split("=", 1)[0]!).filter((key) => existing.has(key));
  if (duplicated.length > 0)
    throw new CliFailure(
      `Error: container-standin: exec -e/--env-file sets ${duplicated.join(", ")}, already in the container's environment; the real CLI appends a duplicate entry and non-shell programs see the old value (apple/container exec env bug)`,
      1,
    );
}

/**
 * Passes a docker stream through, except when its first line is docker's own failure text: that is held back for
 * `translateFailure`. Writes respect the target's backpressure.
 */
function guardStream(source: NodeJS.ReadableStream, target: NodeJS.WritableStream): { failure(): string | undefined } {
  let head = "";
  let passing = false;
  let failed = false;
  source.on("data", (chunk: Buffer) => {
    if (passing) {
      if (!target.write(chunk)) {
        source.pause();
        target.once("drain", () => source.resume());
      }
      return;
    }
    head += chunk.toString("latin1");
    if (failed) return;
    if (DOCKER_FAILURE.test(head)) return void (failed = true);
    if (mayBeDockerFailure(head)) return;
    passing = true;
    target.write(Buffer.from(head, "latin1"));
    head = "";
  });
  source.on("end", () => {
    if (!passing && head && !DOCKER_FAILURE.test(head)) target.write(Buffer.from(head, "latin1"));
  });
  return { failure: () => (!passing && head && DOCKER_FAILURE.test(head) ? head : undefined) };
}

function translateFailure(held: string, id: string, executable: string): string {
  if (/No such container/i.test(held)) return `Error: notFound: "get failed: container ${id} not found"\n`;
  if (/is not running/i.test(held)) return `Error: invalidState: "container ${id} is not running"\n`;
  if (/executable file not found|no such file or directory|not found/i.test(held))
    return `Error: internalError: "failed to find target executable ${executable}"\n`;
  return `Error: internalError: "failed to exec process" (cause: "${held.trim()}")\n`;
}

/**
 * `container exec [options] <id> <cmd> [args…]` over `docker exec`: stdin attached only with `-i` (EOF reaches the
 * process), stdout and stderr separate, the process's exit code (128+N on a signal), a missing executable exit 1 with
 * `failed to find target executable`, `-w` creating a missing directory. Signals sent to this CLI are not forwarded
 * (the default, as in 1.0.0–1.4.1): each prints `failed to send signal`, the third SIGINT/SIGTERM exits 1 and the
 * process keeps running; SIGKILL of this CLI leaves it running too (docker's client runs in its own process group).
 */
export async function execCommand(args: readonly string[], modes: StandinModes): Promise<number> {
  const parsed = parseArguments(args, EXEC_OPTIONS, "exec", 1);
  const [id, executable, ...rest] = parsed.positionals;
  if (!id) throw usageError("Missing expected argument '<container-id>'", "exec");
  if (!executable) throw usageError("Missing expected argument '<arguments> ...'", "exec");
  const environment = environmentOf(parsed);
  await refuseDuplicateKeys(modes, id, environment);
  const workdir = lastValue(parsed, "--workdir");
  const uid = lastValue(parsed, "--uid");
  const gid = lastValue(parsed, "--gid");
  const user = lastValue(parsed, "--user") ?? (uid !== undefined ? `${uid}${gid !== undefined ? `:${gid}` : ""}` : undefined);
  if (workdir !== undefined) {
    // The real CLI (vmexec) creates a missing working directory; docker exec refuses one.
    const made = await docker(modes, ["exec", "-u", "0", dockerNameOf(id), "mkdir", "-p", workdir]);
    if (made.exitCode !== 0) process.stderr.write(translateFailure(made.stderr, id, executable));
    if (made.exitCode !== 0) return 1;
  }
  const pidFile = modes.signals === "forwarded" ? `/tmp/.container-standin-exec-${crypto.randomUUID()}` : undefined;
  const command = pidFile ? ["sh", "-c", `echo $$ >${pidFile}; exec "$@"`, "sh", executable, ...rest] : [executable, ...rest];
  const dockerArguments = [
    "exec",
    ...(hasFlag(parsed, "--interactive") ? ["-i"] : []),
    ...(hasFlag(parsed, "--tty") ? ["-t"] : []),
    ...(hasFlag(parsed, "--detach") ? ["-d"] : []),
    ...(user !== undefined ? ["-u", user] : []),
    ...(workdir !== undefined ? ["-w", workdir] : []),
    ...environment.flatMap((entry) => ["-e", entry]),
    dockerNameOf(id),
    ...command,
  ];
  if (hasFlag(parsed, "--detach")) {
    const result = await docker(modes, dockerArguments);
    if (result.exitCode !== 0) throw new CliFailure(translateFailure(result.stderr, id, executable).trimEnd(), 1);
    process.stdout.write(`${id}\n`);
    return 0;
  }
  const child = spawn(modes.docker, dockerArguments, {
    stdio: [hasFlag(parsed, "--interactive") ? "inherit" : "ignore", "pipe", "pipe"],
    detached: true,
  });
  // docker prints a failed exec start on stdout (the attach stream) or stderr; the real CLI prints its own error.
  const held = [guardStream(child.stdout, process.stdout), guardStream(child.stderr, process.stderr)];
  let signalsSeen = 0;
  for (const name of Object.keys(SIGNAL_NUMBERS)) {
    process.on(name, () => {
      if (modes.signals === "forwarded" && pidFile) {
        void docker(modes, ["exec", "-u", "0", dockerNameOf(id), "sh", "-c", `kill -${name.replace(/^SIG/, "")} "$(cat ${pidFile})"`]);
        return;
      }
      process.stderr.write(`failed to send signal: ["error": invalidArgument: "missing signal in xpc message", "signal": ${SIGNAL_NUMBERS[name]}]\n`);
      if (name === "SIGINT" || name === "SIGTERM") {
        signalsSeen += 1;
        if (signalsSeen >= 3) process.exit(1);
      }
    });
  }
  const exitCode = await new Promise<number>((resolve) => {
    child.on("error", () => resolve(1));
    child.on("close", (code, signal) => resolve(code ?? (signal ? 128 + 9 : 1)));
  });
  const failure = held.map((guard) => guard.failure()).find((text) => text !== undefined);
  if (failure !== undefined) {
    process.stderr.write(translateFailure(failure, id, executable));
    return 1;
  }
  return exitCode;
}
