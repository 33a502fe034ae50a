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
 * One Pyodide interpreter in a worker thread, loaded on first use or by `warm()` (about 2 s). Runs are serialised;
 * code contexts are separate globals dicts in it. If a run cannot be interrupted, the worker is terminated: contexts
 * in it are lost (later runs in one raise `ProviderError`), and the next run starts a fresh interpreter. The fake
 * gives every code context an interpreter of its own (see `PythonInterpreters`), so that loss stays with one context.
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
  private loaded = false;
  /** Calls waiting for the interpreter to load: they keep the process alive (a warm-up alone does not). */
  private waitingForLoad = 0;

  /** The Pyodide version once loaded, or the installed package version. */
  get pyodideVersion(): string {
    return this.version;
  }

  /** Starts loading Pyodide now, without holding the process open, so a later run does not wait for the whole load. */
  warm(): Promise<void> {
    const ready = this.start();
    this.updateReference();
    return ready.then(
      () => {},
      () => {},
    );
  }

  /** True once the interpreter is loaded and nothing is running or queued in it. */
  get idle(): boolean {
    return this.loaded && !this.running && this.queue.length === 0;
  }

  /** Ends the worker (its contexts are gone); pending runs are rejected. */
  terminate(): void {
    const worker = this.worker;
    this.generation += 1;
    this.worker = undefined;
    this.ready = undefined;
    this.loaded = false;
    const running = this.running;
    this.running = undefined;
    const gone = new ProviderError({ backend: "fake", message: "The Python interpreter of this code context was closed with its sandbox." });
    running?.reject(gone);
    this.failQueue(gone);
    void worker?.terminate();
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
          this.loaded = true;
          resolve(worker);
          this.pump();
          this.updateReference();
        } else if (message.type === "failed") {
          reject(
            new BackendUnavailableError({
              backend: "fake",
              remedy: "Reinstall @sbx/fake (its pyodide dependency).",
              message: `Pyodide failed to load: ${String(message.message)}`,
            }),
          );
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
    this.loaded = false;
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
        running.reject(
          new ProviderError({
            backend: "fake",
            message: `Code context ${running.request.contextId} was lost: its Python interpreter was restarted after a run could not be interrupted, or its sandbox was closed. Create a new context.`,
          }),
        );
      } else running.resolve({ error: (message.error as ExecutionError | null) ?? null, roots: (message.roots as PythonRoot[]) ?? [] });
      this.pump();
      this.updateReference();
    }
  }

  /** Keeps the process alive only while Python work is pending, so an idle worker never holds the process open. */
  private updateReference(): void {
    if (!this.worker) return;
    if (this.running || this.queue.length > 0 || this.contextWaiters.size > 0 || this.waitingForLoad > 0) this.worker.ref();
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

  private async loadedWorker(): Promise<Worker> {
    const ready = this.start();
    this.waitingForLoad += 1;
    this.updateReference();
    try {
      return await ready;
    } finally {
      this.waitingForLoad -= 1;
      this.updateReference();
    }
  }

  /** Runs code; resolves after the run and its output are complete. */
  async run(request: PythonRunRequest): Promise<PythonRunOutcome> {
    if (request.contextId !== null) {
      const generation = this.contextGenerations.get(request.contextId);
      if (generation === undefined || generation !== this.generation || !this.worker) {
        throw new ProviderError({
          backend: "fake",
          message: `Code context ${request.contextId} was lost: a run in it could not be interrupted (a long call in C), so its Python interpreter was ended, or its sandbox was closed. Other contexts are unaffected; create a new context.`,
        });
      }
    }
    await this.loadedWorker();
    return new Promise<PythonRunOutcome>((resolve, reject) => {
      this.queue.push({ id: this.nextId++, request, resolve, reject });
      this.pump();
    });
  }

  /** Creates a context (a fresh globals dict). */
  async createContext(contextId: string): Promise<void> {
    const worker = await this.loadedWorker();
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
