import { defineCommand, parse, serialize, type Bash, type BashExecResult, type Command, type StatementNode } from "just-bash";

/** Name of the command appended after each top-level statement to learn that it finished without `exit`. */
const STATEMENT_DONE_COMMAND = "__sbx_statement_done";

/** Tokens of statements that reached their end, filled by the statement-done command. */
const finishedStatements = new Set<string>();

/** The custom command every fake shell registers so the runner can tell "finished" from "called exit". */
export const statementDoneCommand: Command = defineCommand(STATEMENT_DONE_COMMAND, async (args) => {
  if (args[0]) finishedStatements.add(args[0]);
  const status = Number(args[1]);
  return { stdout: "", stderr: "", exitCode: Number.isInteger(status) ? status : 0 };
});

/** What `runShellScript` needs. */
export interface ShellScriptRequest {
  readonly bash: Bash;
  readonly script: string;
  readonly cwd: string;
  readonly env: Readonly<Record<string, string>>;
  /** Standard input as latin1 bytes; empty for none. */
  readonly stdin: string;
  /** Aborting stops the script and every job it started. */
  readonly signal: AbortSignal;
  /** Output of the script and of its jobs while the script runs, in order of completion. */
  readonly onOutput: (result: BashExecResult) => void;
  /** Called with each background job's promise, so the caller can wait for (or outlive) it. */
  readonly onJob: (job: Promise<void>) => void;
}

function statementSource(statement: StatementNode): string {
  return serialize({ type: "Script", statements: [{ ...statement, background: false }] });
}

function isWait(statement: StatementNode): boolean {
  if (statement.pipelines.length !== 1 || statement.background) return false;
  const command = statement.pipelines[0]!.commands;
  if (command.length !== 1 || command[0]!.type !== "SimpleCommand") return false;
  return /^wait(\s|$)/.test(statementSource(statement).trim());
}

/**
 * Runs a script in just-bash, one top-level statement at a time, so that
 *  - output is delivered as each top-level statement ends (just-bash itself returns output only when `exec` ends);
 *  - a top-level `cmd &` really runs in the background (just-bash runs `&` jobs to completion, in order), and a
 *    top-level `wait` waits for those jobs.
 * Shell variables, the working directory, `set -e` and functions carry from one statement to the next. Scripts that
 * do not parse, have a single statement, or read stdin run as one `exec` (output at the end; `&` sequential).
 * @returns the exit status.
 */
export async function runShellScript(request: ShellScriptRequest): Promise<number> {
  const { bash, signal } = request;
  let statements: StatementNode[] | undefined;
  try {
    statements = parse(request.script).statements;
  } catch {
    statements = undefined;
  }
  const whole = !statements || request.stdin.length > 0 || (statements.length <= 1 && !statements.some((statement) => statement.background));
  if (whole) {
    const result = await bash.exec(request.script, {
      cwd: request.cwd,
      env: { ...request.env },
      stdin: request.stdin.length > 0 ? request.stdin : undefined,
      stdinKind: "bytes",
      signal,
      rawScript: true,
    });
    request.onOutput(result);
    return result.exitCode;
  }

  let environment: Record<string, string> = { ...request.env };
  let replaceEnvironment = false;
  let cwd = request.cwd;
  let errexit = false;
  const functions: string[] = [];
  const jobs: Array<Promise<void>> = [];
  let status = 0;

  for (const statement of statements!) {
    if (signal.aborted) break;
    const source = statementSource(statement);
    const prefix = `${functions.join("\n")}${functions.length > 0 ? "\n" : ""}${errexit ? "set -e\n" : ""}`;
    if (statement.background) {
      const job = bash
        .exec(`${prefix}${source}`, { cwd, env: { ...environment }, replaceEnv: replaceEnvironment, signal, rawScript: true })
        .then((result) => request.onOutput(result), () => {});
      jobs.push(job);
      request.onJob(job);
      status = 0;
      continue;
    }
    if (isWait(statement)) {
      await Promise.all(jobs);
      status = 0;
      continue;
    }
    const token = crypto.randomUUID();
    const result = await bash.exec(`${prefix}${source}\n${STATEMENT_DONE_COMMAND} ${token} $?`, { cwd, env: { ...environment }, replaceEnv: replaceEnvironment, signal, rawScript: true });
    request.onOutput(result);
    const finished = finishedStatements.delete(token);
    status = result.exitCode;
    if (!finished || signal.aborted) return status;
    const first = statement.pipelines[0]?.commands[0];
    if (statement.pipelines.length === 1 && first?.type === "FunctionDef") functions.push(source);
    environment = { ...result.env };
    replaceEnvironment = true;
    cwd = result.env.PWD ?? cwd;
    errexit = (result.env.SHELLOPTS ?? "").split(":").includes("errexit");
  }
  return status;
}
