/**
 * The task command router (`modal.task_command_router.TaskCommandRouter`): exec start, stdio reads, stdin writes,
 * wait and poll. The SDK sends only `authorization: Bearer <jwt>` here. Every exec runs inside the sandbox's
 * container; the filesystem API arrives here as execs of `/__modal/.bin/modal-sandbox-fs-tools`, which the
 * emulator installed in the container.
 */
import { ServerError, Status, type CallContext } from "nice-grpc";
import type { EmulatedExec } from "./emulated-exec.js";
import type { EmulatedSandbox } from "./emulated-sandbox.js";
import type { EmulatorState } from "./emulator-state.js";
import type { Handler } from "./grpc-service.js";
import { terminalOf } from "./exec-terminal.js";
import { taskSnapshotFilesystem } from "./image-store.js";

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- gRPC messages decoded from the proto definitions at run time, untyped
type Message = Record<string, any>;

/** `TaskExecStdoutConfig` / `TaskExecStderrConfig`: 0 = DEVNULL, 1 = PIPE. */
const PIPE = 1;

function requireJwt(state: EmulatorState, context: CallContext): void {
  if (context.metadata.get("authorization") !== `Bearer ${state.routerJwt}`) {
    throw new ServerError(Status.UNAUTHENTICATED, "Missing or invalid command router JWT (modal emulator)");
  }
}

function sandboxOfTask(state: EmulatorState, taskId: string): EmulatedSandbox {
  for (const sandbox of state.sandboxes.values()) {
    if (sandbox.taskId !== taskId) continue;
    if (sandbox.finished) throw new ServerError(Status.FAILED_PRECONDITION, `Task ${taskId} has finished (sandbox ${sandbox.id})`);
    return sandbox;
  }
  throw new ServerError(Status.NOT_FOUND, `Task ${taskId} not found`);
}

function execOf(state: EmulatorState, taskId: string, execId: string, allowFinishedSandbox = false): EmulatedExec {
  for (const sandbox of state.sandboxes.values()) {
    if (sandbox.taskId !== taskId) continue;
    const exec = sandbox.execs.get(execId);
    if (!exec) throw new ServerError(Status.NOT_FOUND, `Exec ${execId} not found`);
    if (sandbox.finished && !allowFinishedSandbox && exec.status === undefined)
      throw new ServerError(Status.FAILED_PRECONDITION, `Task ${taskId} has finished`);
    sandbox.touch();
    return exec;
  }
  throw new ServerError(Status.NOT_FOUND, `Task ${taskId} not found`);
}

function exitStatusMessage(exec: EmulatedExec): Message {
  const status = exec.status;
  if (!status) return {};
  return "code" in status ? { code: status.code } : { signal: status.signal };
}

function inlineEnvironment(sources: Array<{ secretId?: string; env?: { contents: Record<string, string> } }> | undefined): Record<string, string> {
  const environment: Record<string, string> = {};
  for (const source of sources ?? []) {
    if (source.secretId) throw new ServerError(Status.NOT_FOUND, `Secret ${source.secretId} not found (the modal emulator has no named secrets)`);
    Object.assign(environment, source.env?.contents ?? {});
  }
  return environment;
}

function writeStdin(exec: EmulatedExec, offset: number, data: Uint8Array, eof: boolean): void {
  try {
    exec.writeStdin(offset, data, eof);
  } catch (error) {
    throw new ServerError(Status.FAILED_PRECONDITION, error instanceof Error ? error.message : String(error));
  }
}

/** The task command router handlers, keyed by the ts-proto method names. */
export function taskCommandRouterHandlers(state: EmulatorState): Record<string, Handler> {
  return {
    async taskExecStart(request: Message, context: CallContext) {
      requireJwt(state, context);
      const sandbox = sandboxOfTask(state, request.taskId);
      if (!request.execId) throw new ServerError(Status.INVALID_ARGUMENT, "exec_id is required");
      if (!request.commandArgs?.length) throw new ServerError(Status.INVALID_ARGUMENT, "command_args must not be empty");
      if (request.containerId) throw new ServerError(Status.INVALID_ARGUMENT, "the modal emulator has no sidecar containers");
      await sandbox.startExec({
        execId: request.execId,
        argv: request.commandArgs,
        environment: { ...(request.env ?? {}), ...inlineEnvironment(request.secretSources) },
        workdir: request.workdir,
        timeoutSeconds: request.timeoutSecs,
        stdoutPiped: request.stdoutConfig === PIPE,
        stderrPiped: request.stderrConfig === PIPE,
        terminal: terminalOf(request.ptyInfo),
      });
      return {};
    },

    async *taskExecStdioRead(request: Message, context: CallContext) {
      requireJwt(state, context);
      const exec = execOf(state, request.taskId, request.execId, true);
      const buffer = request.fileDescriptor === 1 ? exec.stderr : exec.stdout;
      for await (const data of buffer.readFrom(Number(request.offset ?? 0), context.signal)) yield { data };
    },

    async taskExecStdinWrite(request: Message, context: CallContext) {
      requireJwt(state, context);
      writeStdin(execOf(state, request.taskId, request.execId), Number(request.offset ?? 0), request.data ?? new Uint8Array(0), Boolean(request.eof));
      return {};
    },

    async taskExecStdinWriteStream(requests: AsyncIterable<Message>, context: CallContext) {
      requireJwt(state, context);
      let exec: EmulatedExec | undefined;
      let offset = 0;
      for await (const request of requests) {
        if (request.start) {
          exec = execOf(state, request.start.taskId, request.start.execId);
          offset = Number(request.start.offset ?? 0);
        } else if (!exec) {
          throw new ServerError(Status.INVALID_ARGUMENT, "the first message must be `start`");
        } else if (request.data) {
          writeStdin(exec, offset, request.data, false);
          offset += request.data.length;
        } else if (request.end) {
          writeStdin(exec, offset, new Uint8Array(0), true);
        }
      }
      return {};
    },

    async taskExecStdinStatus(request: Message, context: CallContext) {
      requireJwt(state, context);
      const exec = execOf(state, request.taskId, request.execId, true);
      return { numBytesWritten: exec.stdinBytesWritten, closed: exec.stdinClosed };
    },

    async taskExecWait(request: Message, context: CallContext) {
      requireJwt(state, context);
      const exec = execOf(state, request.taskId, request.execId, true);
      await exec.wait(context.signal);
      return exitStatusMessage(exec);
    },

    async taskExecPoll(request: Message, context: CallContext) {
      requireJwt(state, context);
      return exitStatusMessage(execOf(state, request.taskId, request.execId, true));
    },

    // `sandbox.snapshotFilesystem()` (ADR 0062): the sandbox's files only, as a new image.
    async taskSnapshotFilesystem(request: Message, context: CallContext) {
      requireJwt(state, context);
      const sandbox = sandboxOfTask(state, request.taskId);
      sandbox.touch();
      return taskSnapshotFilesystem(state, sandbox, request);
    },
  } as unknown as Record<string, Handler>;
}
