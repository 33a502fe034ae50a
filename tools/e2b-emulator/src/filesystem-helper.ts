/**
 * Client side of the persistent filesystem helper (see
 * filesystem-helper-script.ts): one `python3` process per sandbox, running as
 * root like envd, started lazily with one long-lived `docker exec`, so envd
 * filesystem RPCs cost a syscall instead of a `docker exec` each. The
 * requesting user goes with each request: it owns what mkdir and move create.
 */
import { startExec, type RunningExec } from "@sbx/emulator-kit";
import { ConnectProtocolError, type ConnectErrorCode } from "./connect-protocol.js";
import type { ContainerSandbox } from "./container-sandbox.js";
import { filesystemHelperSource } from "./filesystem-helper-script.js";
import { LineSplitter } from "./line-splitter.js";

/** A request to the helper (without its id). */
export type FilesystemHelperRequest =
  | { op: "stat"; path: string }
  | { op: "list"; path: string; depth: number }
  | { op: "mkdir"; path: string }
  | { op: "move"; source: string; destination: string }
  | { op: "remove"; path: string };

/** An entry as the helper describes it (lstat of the path). */
export interface HelperEntry {
  path: string;
  type: number;
  size: string;
  mode: number;
  permissions: string;
  owner: string;
  group: string;
  modifiedMilliseconds: number;
  symlinkTarget?: string;
}

/** Raised when the helper cannot run in this sandbox (e.g. the image has no python3); callers fall back to exec scripts. */
export class FilesystemHelperUnavailableError extends Error {}

/** The helper exited before answering: the request may not have reached it. */
class HelperExitedError extends ConnectProtocolError {
  constructor(reason: string) {
    super("internal", `filesystem helper exited: ${reason}`);
  }
}

/** Requests that change nothing, so one that went to a helper which then died can be asked again. */
const READ_ONLY_OPERATIONS: ReadonlySet<FilesystemHelperRequest["op"]> = new Set(["stat", "list"]);

type HelperResponse = { id: number; ok: true; result: unknown } | { id: number; ok: false; code: ConnectErrorCode; message: string };

interface PendingRequest {
  resolve(result: unknown): void;
  reject(error: Error): void;
}

/** One helper process; restarted on the next request if it died. */
class FilesystemHelper {
  private running: RunningExec | undefined;
  private startup: Promise<RunningExec> | undefined;
  private readonly pending = new Map<number, PendingRequest>();
  private nextId = 1;
  private closed = false;
  /** Set once the helper could not even start: the image cannot run it. */
  private unavailable: string | undefined;

  constructor(
    private readonly sandbox: ContainerSandbox,
    private readonly user: string,
  ) {}

  /** Sends one request; responses are matched by id, so concurrent requests are safe. */
  async request(request: FilesystemHelperRequest & { user: string }): Promise<unknown> {
    try {
      return await this.send(request);
    } catch (error) {
      if (!(error instanceof HelperExitedError) || !READ_ONLY_OPERATIONS.has(request.op) || this.closed || this.sandbox.gone) throw error;
      // Written to a helper that had died but whose exit was not seen yet (under load the exec's end arrives late):
      // a read changed nothing, so a new helper answers it. envd itself has no helper process to lose.
      return this.send(request);
    }
  }

  private async send(request: FilesystemHelperRequest & { user: string }): Promise<unknown> {
    if (this.unavailable !== undefined) throw new FilesystemHelperUnavailableError(this.unavailable);
    if (this.closed || this.sandbox.gone) throw new ConnectProtocolError("unavailable", "the sandbox is gone");
    let running = await this.ensureStarted();
    // It may have died between starting and now: start another one once.
    if (this.running !== running) running = await this.ensureStarted();
    if (this.running !== running) throw new ConnectProtocolError("internal", "the filesystem helper exited");
    const id = this.nextId++;
    return new Promise<unknown>((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      running.connection.write(JSON.stringify({ id, ...request }) + "\n");
    });
  }

  private ensureStarted(): Promise<RunningExec> {
    if (!this.startup) {
      const startup = this.start();
      this.startup = startup;
      startup.catch(() => {
        if (this.startup === startup) this.startup = undefined;
      });
    }
    return this.startup;
  }

  private async start(): Promise<RunningExec> {
    const lines = new LineSplitter();
    let isReady = false;
    const stderr: string[] = [];
    let resolveReady!: () => void;
    const ready = new Promise<void>((resolve) => (resolveReady = resolve));
    const running = await startExec(
      this.sandbox.container,
      { command: ["python3", "-u", "-c", filesystemHelperSource], user: this.user, workingDirectory: "/", attachStdin: true, pollExitCode: false },
      {
        onStdout: (chunk) => {
          for (const line of lines.push(chunk)) {
            if (!line.trim()) continue;
            let message: HelperResponse | { ready: true };
            try {
              message = JSON.parse(line) as HelperResponse | { ready: true };
            } catch {
              stderr.push(line);
              continue;
            }
            if ("ready" in message) {
              isReady = true;
              resolveReady();
              continue;
            }
            this.settle(message);
          }
        },
        onStderr: (chunk) => {
          if (stderr.length < 50) stderr.push(chunk.toString("utf8"));
        },
      },
    );
    this.running = running;
    let ended = false;
    // The helper spawns no children, so the end of its output is its exit (no exec-inspect polling needed).
    void running.outputEnded.then(() => {
      ended = true;
      if (this.running === running) {
        // Died after starting: the next request starts a new one.
        this.running = undefined;
        this.startup = undefined;
      }
      const reason = stderr.join("").trim() || "the filesystem helper exited";
      if (!isReady && !this.closed && !this.sandbox.gone) this.unavailable = reason;
      resolveReady();
      this.failPending(new HelperExitedError(reason));
    });
    await ready;
    if (!isReady) {
      running.detach();
      throw new FilesystemHelperUnavailableError(this.unavailable ?? "the filesystem helper did not start");
    }
    if (this.closed) {
      running.detach();
      throw new ConnectProtocolError("unavailable", "the sandbox is gone");
    }
    if (ended) throw new ConnectProtocolError("internal", "the filesystem helper exited right after starting");
    return running;
  }

  private settle(response: HelperResponse): void {
    const waiting = this.pending.get(response.id);
    if (!waiting) return;
    this.pending.delete(response.id);
    if (response.ok) waiting.resolve(response.result);
    else waiting.reject(new ConnectProtocolError(response.code, response.message));
  }

  private failPending(error: Error): void {
    const waiting = [...this.pending.values()];
    this.pending.clear();
    for (const request of waiting) request.reject(error);
  }

  /** Ends the helper (closing stdin makes it exit) and fails whatever is still waiting. */
  close(): void {
    this.closed = true;
    const running = this.running;
    this.running = undefined;
    this.startup = undefined;
    if (running) {
      running.closeStdin();
      running.detach();
    }
    this.failPending(new ConnectProtocolError("unavailable", "the sandbox is gone"));
  }
}

/** The filesystem helper of one sandbox (root, like envd). */
export class FilesystemHelperRegistry {
  private readonly helpers = new Map<string, FilesystemHelper>();

  constructor(private readonly sandbox: ContainerSandbox) {}

  /** Runs a request for `user` through the sandbox's root helper (started on first use, restarted if it died). */
  request(user: string, request: FilesystemHelperRequest): Promise<unknown> {
    let helper = this.helpers.get("root");
    if (!helper) {
      helper = new FilesystemHelper(this.sandbox, "root");
      this.helpers.set("root", helper);
    }
    return helper.request({ ...request, user });
  }

  /** Called when the sandbox dies. */
  closeAll(): void {
    for (const helper of this.helpers.values()) helper.close();
    this.helpers.clear();
  }
}
