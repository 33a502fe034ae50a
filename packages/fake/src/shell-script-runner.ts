import {
  defineCommand,
  serialize,
  type Bash,
  type Command,
  type IFileSystem,
  type ScriptNode,
  type StatementNode,
  type TransformPlugin,
} from "just-bash";
import { StatementOutputFileSystem, type OutputStreamSink } from "./statement-output-file-system.js";

/** First statement of every script the runner executes (`__sbx_stream <token>; ` on the script's first line, so line numbers stay): marks it for the transform. */
const STREAM_MARKER_COMMAND = "__sbx_stream";
/** Replaces a top-level `cmd &`: starts the statement as a concurrent job. Arguments: token, job index. */
const BACKGROUND_COMMAND = "__sbx_background";
/** Replaces a top-level `wait`: waits for the script's jobs. Argument: token. */
const WAIT_COMMAND = "__sbx_wait";
/** Replaces a top-level `trap`: records the EXIT handler, run when the script ends. Arguments: token, trap's own. */
const TRAP_COMMAND = "__sbx_trap";

/** What `run` needs. */
export interface ShellScriptRequest {
  readonly script: string;
  /** Absolute working directory (checked to exist by the caller). */
  readonly cwd: string;
  readonly env: Readonly<Record<string, string>>;
  /** Standard input as latin1 bytes; empty for none. */
  readonly stdin: string;
  /** Aborting stops the script and every job it started. */
  readonly signal: AbortSignal;
  /** Bytes written to standard output, as each top-level statement (or background job statement) ends. */
  readonly onStdout: (bytes: Uint8Array) => void;
  /** Bytes written to standard error, likewise. */
  readonly onStderr: (bytes: Uint8Array) => void;
  /** Called with each background job's promise, so the caller can wait for (or outlive) it. */
  readonly onJob: (job: Promise<void>) => void;
}

/** One script being run: where its output goes and the jobs it started. */
interface ScriptRun {
  readonly token: string;
  readonly stdoutPath: string;
  readonly stderrPath: string;
  readonly request: ShellScriptRequest;
  /** Sources of the top-level background statements, by index, each preceded by the function definitions before it. */
  readonly jobSources: string[];
  readonly jobs: Array<Promise<number>>;
  /** Top-level function definitions so far (the EXIT handler and jobs may call them). */
  readonly functionSources: string[];
  /** The EXIT trap's handler, or "" for none. */
  exitTrap: string;
}

/** True for the names `trap` accepts for the shell's exit: EXIT, 0, SIGEXIT, in any case. */
function isExitCondition(name: string): boolean {
  return /^(?:sig)?exit$/i.test(name) || name === "0";
}

function literalWord(value: string) {
  return { type: "Word" as const, parts: [{ type: "Literal" as const, value }] };
}

function simpleCommandStatement(name: string, args: readonly string[]): StatementNode {
  return {
    type: "Statement",
    background: false,
    operators: [],
    pipelines: [
      {
        type: "Pipeline",
        negated: false,
        commands: [{ type: "SimpleCommand", name: literalWord(name), args: args.map(literalWord), assignments: [], redirections: [] }],
      },
    ],
  } as unknown as StatementNode;
}

/** The command name of a statement made of one simple command, else undefined. */
function simpleCommandName(statement: StatementNode): string | undefined {
  if (statement.pipelines.length !== 1) return undefined;
  const commands = statement.pipelines[0]!.commands;
  if (commands.length !== 1 || commands[0]!.type !== "SimpleCommand") return undefined;
  const parts = commands[0]!.name?.parts ?? [];
  return parts.length === 1 && parts[0]!.type === "Literal" ? parts[0]!.value : undefined;
}

function isFunctionDefinition(statement: StatementNode): boolean {
  return (
    statement.pipelines.length === 1 && statement.pipelines[0]!.commands.length === 1 && statement.pipelines[0]!.commands[0]!.type === "FunctionDef"
  );
}

/**
 * Runs shell scripts in just-bash as ONE `exec` each, so everything the shell keeps between statements (`$?`,
 * `PIPESTATUS`, options such as `set -e` and `pipefail`, variables, arrays, functions, the working directory) behaves
 * as in bash, while output still streams:
 *  - a transform (keyed by a marker statement, so nested `bash -c`/`source` scripts are left alone) wraps each
 *    top-level statement in `{ …; } >>stdout 2>>stderr`, where those two paths belong to a filesystem wrapper that
 *    hands the output to the command's callbacks as each statement ends (turned into bytes per stream by
 *    `OutputEncoder`, since just-bash marks no output as text or bytes);
 *  - a top-level `cmd &` becomes a command that starts the statement as a concurrent `exec` (with the variables and
 *    working directory of that moment and the functions defined before it), and a top-level `wait` waits for those
 *    jobs. Elsewhere `&` runs to completion in order (just-bash's behaviour);
 *  - a top-level `trap '…' EXIT` (just-bash has no `trap`) records the handler, which runs when the script ends.
 */
export class ShellScriptRunner {
  private readonly output: StatementOutputFileSystem;
  private readonly runs = new Map<string, ScriptRun>();
  private bash: Bash | undefined;
  /** Custom commands to register on the Bash instance. */
  readonly commands: Command[];

  constructor(base: IFileSystem) {
    this.output = new StatementOutputFileSystem(base);
    this.commands = [
      defineCommand(STREAM_MARKER_COMMAND, async () => ({ stdout: "", stderr: "", exitCode: 0 })),
      defineCommand(BACKGROUND_COMMAND, async (args, context) => {
        const run = this.runs.get(args[0] ?? "");
        const source = run?.jobSources[Number(args[1])];
        if (run && source !== undefined) this.startJob(run, source, Object.fromEntries(context.env), context.cwd);
        return { stdout: "", stderr: "", exitCode: 0 };
      }),
      defineCommand(WAIT_COMMAND, async (args) => {
        const run = this.runs.get(args[0] ?? "");
        let status = 0;
        if (run) {
          // Jobs may start more jobs while we wait: wait until none is left unsettled.
          for (let settled = 0; settled < run.jobs.length; settled++) status = await run.jobs[settled]!;
        }
        return { stdout: "", stderr: "", exitCode: args.length > 1 ? status : 0 };
      }),
      defineCommand(TRAP_COMMAND, async (args) => {
        const run = this.runs.get(args[0] ?? "");
        const rest = args.slice(1);
        if (!run) return { stdout: "", stderr: "", exitCode: 0 };
        if (rest.length === 0 || rest[0] === "-p") {
          return { stdout: run.exitTrap ? `trap -- '${run.exitTrap.replaceAll("'", "'\\''")}' EXIT\n` : "", stderr: "", exitCode: 0 };
        }
        const [action, ...conditions] = rest[0] === "--" ? rest.slice(1) : rest;
        // `trap EXIT` (one operand, a condition) resets it, like `trap - EXIT`.
        const handler = conditions.length === 0 ? "-" : action!;
        const targets = conditions.length === 0 ? [action!] : conditions;
        // Only EXIT can fire in the fake (there are no signals); other conditions are accepted and never fire.
        if (targets.some(isExitCondition)) run.exitTrap = handler === "-" ? "" : handler;
        return { stdout: "", stderr: "", exitCode: 0 };
      }),
    ];
  }

  /** The filesystem to give just-bash (the base filesystem plus the output streams). */
  get fileSystem(): IFileSystem {
    return this.output.fileSystem;
  }

  /** Connects the runner to the Bash instance built with `fileSystem` and `commands`. */
  attach(bash: Bash): void {
    this.bash = bash;
    bash.registerTransformPlugin(this.transformPlugin());
  }

  private transformPlugin(): TransformPlugin {
    return {
      name: "sbx-statement-streams",
      transform: ({ ast }) => {
        const first = ast.statements[0];
        if (!first || simpleCommandName(first) !== STREAM_MARKER_COMMAND) return { ast };
        const command = first.pipelines[0]!.commands[0] as { args: Array<{ parts: Array<{ type: string; value?: string }> }> };
        const run = this.runs.get(command.args[0]?.parts[0]?.value ?? "");
        if (!run) return { ast };
        return { ast: this.wrapStatements(ast.statements.slice(1), run) };
      },
    };
  }

  private wrapStatements(statements: readonly StatementNode[], run: ScriptRun): ScriptNode {
    const functionSources = run.functionSources;
    const wrapped = statements.map((original): StatementNode => {
      let statement = original;
      if (statement.background) {
        const source = serialize({ type: "Script", statements: [{ ...statement, background: false }] });
        run.jobSources.push([...functionSources, source].join("\n"));
        return simpleCommandStatement(BACKGROUND_COMMAND, [run.token, String(run.jobSources.length - 1)]);
      }
      if (simpleCommandName(statement) === "wait") {
        const args = (statement.pipelines[0]!.commands[0] as { args: unknown[] }).args;
        return simpleCommandStatement(WAIT_COMMAND, args.length > 0 ? [run.token, "with-arguments"] : [run.token]);
      }
      if (isFunctionDefinition(statement)) functionSources.push(serialize({ type: "Script", statements: [statement] }));
      if (simpleCommandName(statement) === "trap") {
        const command = statement.pipelines[0]!.commands[0] as unknown as { name: unknown; args: unknown[] };
        const replaced = { ...command, name: literalWord(TRAP_COMMAND), args: [literalWord(run.token), ...command.args] };
        statement = { ...statement, pipelines: [{ ...statement.pipelines[0]!, commands: [replaced] }] } as unknown as StatementNode;
      }
      return {
        type: "Statement",
        background: false,
        operators: [],
        pipelines: [
          {
            type: "Pipeline",
            negated: false,
            commands: [
              {
                type: "Group",
                body: [statement],
                redirections: [
                  { type: "Redirection", fd: null, operator: ">>", target: literalWord(run.stdoutPath) },
                  { type: "Redirection", fd: 2, operator: ">>", target: literalWord(run.stderrPath) },
                ],
              },
            ],
          },
        ],
      } as unknown as StatementNode;
    });
    return { type: "Script", statements: wrapped };
  }

  private startJob(run: ScriptRun, source: string, env: Record<string, string>, cwd: string): void {
    const bash = this.bash!;
    const job = bash
      .exec(`${STREAM_MARKER_COMMAND} ${run.token}; ${source}`, { cwd, env, replaceEnv: true, signal: run.request.signal, rawScript: true })
      .then(
        (result) => {
          this.emitLeftovers(run, result.stdout, result.stderr);
          return result.exitCode;
        },
        () => 1,
      );
    run.jobs.push(job);
    run.request.onJob(job.then(() => {}));
  }

  /** Output the statements' redirections did not carry (for example an error raised outside them). */
  private emitLeftovers(run: ScriptRun, stdout: string, stderr: string): void {
    if (run.request.signal.aborted) stderr = stderr.replace(/bash: execution aborted\n?$/, "");
    if (stdout) run.request.onStdout(this.output.encodeLeftover(run.token, "stdout", stdout));
    if (stderr) run.request.onStderr(this.output.encodeLeftover(run.token, "stderr", stderr));
  }

  /**
   * Runs the EXIT trap's handler after the script ended (normally, through `exit`, or `set -e`), with the script's
   * final variables, working directory and top-level functions, and `$?` set to the script's status. The script's
   * status stays the command's exit code.
   */
  private async runExitTrap(run: ScriptRun, status: number, env: Record<string, string>): Promise<void> {
    const source = [...run.functionSources, `(exit ${status})`, run.exitTrap].join("\n");
    run.exitTrap = "";
    const result = await this.bash!.exec(`${STREAM_MARKER_COMMAND} ${run.token}; ${source}`, {
      cwd: env.PWD ?? run.request.cwd,
      env,
      replaceEnv: true,
      signal: run.request.signal,
      rawScript: true,
    });
    this.emitLeftovers(run, result.stdout, result.stderr);
  }

  /**
   * Runs a script. Resolves with its exit status once the script's own statements end; background jobs may still be
   * running (the caller learns of them through `onJob`). Scripts that do not parse run unchanged (just-bash reports
   * the syntax error).
   */
  async run(request: ShellScriptRequest): Promise<number> {
    const bash = this.bash!;
    const token = crypto.randomUUID().replaceAll("-", "");
    const sink: OutputStreamSink = { onStdout: request.onStdout, onStderr: request.onStderr };
    const streams = this.output.open(token, sink);
    const run: ScriptRun = {
      token,
      stdoutPath: streams.stdoutPath,
      stderrPath: streams.stderrPath,
      request,
      jobSources: [],
      jobs: [],
      functionSources: [],
      exitTrap: "",
    };
    this.runs.set(token, run);
    try {
      const result = await bash.exec(`${STREAM_MARKER_COMMAND} ${token}; ${request.script}`, {
        cwd: request.cwd,
        env: { ...request.env },
        stdin: request.stdin.length > 0 ? request.stdin : undefined,
        stdinKind: "bytes",
        signal: request.signal,
        rawScript: true,
      });
      this.emitLeftovers(run, result.stdout, result.stderr);
      if (run.exitTrap && !request.signal.aborted) await this.runExitTrap(run, result.exitCode, result.env);
      return result.exitCode;
    } finally {
      // Jobs still running keep streaming into the run until they end.
      void Promise.allSettled(run.jobs).then(async () => {
        for (let settled = 0; settled < run.jobs.length; settled++) await run.jobs[settled];
        this.runs.delete(token);
        streams.close();
      });
    }
  }
}
