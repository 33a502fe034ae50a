import { createRequire } from "node:module";
import { Worker } from "node:worker_threads";
import { BackendUnavailableError, ProviderError, type ExecutionError, type NetworkPolicy } from "@sbx/core";
import { PYTHON_WORKER_SOURCE } from "./python-worker-source.js";

/** One folder copied into Pyodide's filesystem for a run. */
export interface PythonRoot {
  /** Absolute path, the same inside the sandbox and inside Pyodide. */
  readonly path: string;
  /** When true, nothing is copied back and the copy is made read-only. */
  readonly readOnly: boolean;
  /** Directories and files under `path`. */
  readonly entries: readonly PythonEntry[];
}

/** A directory or file in a `PythonRoot`. */
export interface PythonEntry {
  readonly path: string;
  readonly kind: "dir" | "file";
  readonly data?: Uint8Array;
}

/** A request to run Python in the shared interpreter. */
export interface PythonRunRequest {
  readonly code: string;
  readonly contextId: string | null;
  readonly cwd: string;
  readonly env: Readonly<Record<string, string>>;
  readonly roots: readonly PythonRoot[];
  readonly policy: NetworkPolicy;
  readonly signal: AbortSignal;
  readonly onStdout: (chunk: Uint8Array) => void;
  readonly onStderr: (chunk: Uint8Array) => void;
}

/** What a run produced: the error it raised and the writable roots as they are afterwards. */
export interface PythonRunOutcome {
  readonly error: ExecutionError | null;
  readonly roots: readonly PythonRoot[];
}

/** How long an interrupted run may take to stop before the worker is terminated. */
const INTERRUPT_GRACE_MS = 750;

interface PendingRun {
  readonly id: number;
  readonly request: PythonRunRequest;
  readonly resolve: (outcome: PythonRunOutcome) => void;
  readonly reject: (error: unknown) => void;
}

/**
 * One Pyodide interpreter per process, in a worker thread, loaded on first use (about 2 s) so sandboxes that never
 * run code stay fast. Runs are serialised; code contexts are separate globals dicts in that one interpreter
 * (imported modules are shared between contexts, as `sys.modules` is one). If a run cannot be interrupted, the
 * worker is terminated and every context in the process is lost; later runs in a lost context raise.
 */
export class PythonRuntime {
  private worker: Worker | undefined;
  private ready: Promise<Worker> | undefined;
  private generation = 0;
  private nextId = 1;
  private readonly queue: PendingRun[] = [];
  private running: PendingRun | undefined;
  private readonly interruptBuffer = new Int32Array(new SharedArrayBuffer(4));
  private readonly contextGenerations = new Map<string, number>();
  private readonly contextWaiters = new Map<number, () => void>();
  private version = "";

  /** The Pyodide version once loaded, or the installed package version. */
  get pyodideVersion(): string {
    return this.version;
  }

  private start(): Promise<Worker> {
    if (this.ready) return this.ready;
    const pyodidePath = createRequire(import.meta.url).resolve("pyodide");
    const worker = new Worker(PYTHON_WORKER_SOURCE, { eval: true, workerData: { pyodidePath, interruptBuffer: this.interruptBuffer } });
    this.worker = worker;
    this.generation += 1;
    const generation = this.generation;
    this.ready = new Promise<Worker>((resolve, reject) => {
      worker.on("message", (message: Record<string, unknown>) => {
        if (message.type === "ready") {
          this.version = String(message.version);
          resolve(worker);
          this.pump();
          this.updateReference();
        } else if (message.type === "failed") {
          reject(new BackendUnavailableError({ backend: "fake", remedy: "Reinstall @sbx/fake (its pyodide dependency).", message: `Pyodide failed to load: ${String(message.message)}` }));
        } else this.onMessage(message);
      });
      worker.on("error", (error) => {
        reject(error);
        this.onWorkerGone(generation, error);
      });
      worker.on("exit", () => this.onWorkerGone(generation, new Error("the Python worker exited")));
    });
    this.ready.catch(() => {});
    return this.ready;
  }

  private onWorkerGone(generation: number, cause: unknown): void {
    if (generation !== this.generation) return;
    this.worker = undefined;
    this.ready = undefined;
    const running = this.running;
    this.running = undefined;
    if (running) {
      if (running.request.signal.aborted) running.resolve({ error: null, roots: [] });
      else running.reject(new ProviderError({ backend: "fake", cause, message: "The fake backend's Python worker stopped unexpectedly." }));
    }
    if (this.queue.length > 0) void this.start().catch((error) => this.failQueue(error));
  }

  private failQueue(error: unknown): void {
    for (const pending of this.queue.splice(0)) pending.reject(error);
  }

  private onMessage(message: Record<string, unknown>): void {
    if (message.type === "contextCreated") {
      this.contextWaiters.get(message.id as number)?.();
      this.contextWaiters.delete(message.id as number);
      this.updateReference();
      return;
    }
    const running = this.running;
    if (!running || message.id !== running.id) return;
    if (message.type === "stdout") running.request.onStdout(message.data as Uint8Array);
    else if (message.type === "stderr") running.request.onStderr(message.data as Uint8Array);
    else if (message.type === "done") {
      this.running = undefined;
      Atomics.store(this.interruptBuffer, 0, 0);
      if (message.missingContext) {
        running.reject(new ProviderError({ backend: "fake", message: `Code context ${running.request.contextId} no longer exists: the fake's Python worker was restarted (a run could not be interrupted) or the sandbox was closed.` }));
      } else running.resolve({ error: (message.error as ExecutionError | null) ?? null, roots: (message.roots as PythonRoot[]) ?? [] });
      this.pump();
      this.updateReference();
    }
  }

  /** Keeps the process alive only while Python work is pending, so an idle worker never holds the process open. */
  private updateReference(): void {
    if (!this.worker) return;
    if (this.running || this.queue.length > 0 || this.contextWaiters.size > 0) this.worker.ref();
    else this.worker.unref();
  }

  private pump(): void {
    if (this.running || !this.worker || this.queue.length === 0) return;
    const next = this.queue.shift()!;
    if (next.request.signal.aborted) {
      next.resolve({ error: null, roots: [] });
      this.pump();
      return;
    }
    this.running = next;
    this.updateReference();
    const { request } = next;
    const onAbort = () => this.interrupt(next);
    request.signal.addEventListener("abort", onAbort, { once: true });
    const worker = this.worker;
    worker.postMessage({
      type: "run",
      id: next.id,
      code: request.code,
      contextId: request.contextId,
      cwd: request.cwd,
      env: { ...request.env },
      roots: request.roots,
      policy: { egress: request.policy.egress, allow: request.policy.allow ?? [] },
    });
  }

  private interrupt(run: PendingRun): void {
    if (this.running !== run) return;
    Atomics.store(this.interruptBuffer, 0, 2); // SIGINT: KeyboardInterrupt at the next bytecode
    const generation = this.generation;
    const worker = this.worker;
    setTimeout(() => {
      if (this.running === run && this.generation === generation && worker) {
        // It did not stop (a long call in C): end the worker. Contexts in it are lost.
        void worker.terminate();
      }
    }, INTERRUPT_GRACE_MS).unref();
  }

  /** Runs code; resolves after the run and its output are complete. */
  async run(request: PythonRunRequest): Promise<PythonRunOutcome> {
    if (request.contextId !== null) {
      const generation = this.contextGenerations.get(request.contextId);
      if (generation === undefined || generation !== this.generation || !this.worker) {
        throw new ProviderError({ backend: "fake", message: `Code context ${request.contextId} no longer exists: the fake's Python worker was restarted after a run could not be interrupted, or the sandbox was closed. Create a new context.` });
      }
    }
    await this.start();
    return new Promise<PythonRunOutcome>((resolve, reject) => {
      this.queue.push({ id: this.nextId++, request, resolve, reject });
      this.pump();
    });
  }

  /** Creates a context (a fresh globals dict). */
  async createContext(contextId: string): Promise<void> {
    const worker = await this.start();
    const id = this.nextId++;
    await new Promise<void>((resolve) => {
      this.contextWaiters.set(id, resolve);
      this.updateReference();
      worker.postMessage({ type: "createContext", id, contextId });
    });
    this.contextGenerations.set(contextId, this.generation);
  }

  /** Forgets contexts (when their sandbox is destroyed). */
  dropContexts(contextIds: readonly string[]): void {
    for (const contextId of contextIds) this.contextGenerations.delete(contextId);
    if (this.worker && contextIds.length > 0) this.worker.postMessage({ type: "dropContexts", contextIds });
  }
}

let shared: PythonRuntime | undefined;

/** The process-wide Python runtime (created on first use, loaded on first run). */
export function sharedPythonRuntime(): PythonRuntime {
  shared ??= new PythonRuntime();
  return shared;
}
