import { PythonRuntime, type PythonRunOutcome, type PythonRunRequest } from "./python-runtime.js";

/**
 * The Python interpreters of one process: one shared by every sandbox for runs outside a context, and one per code
 * context, so a run that cannot be interrupted (and ends its interpreter) loses only its own context. Creating a
 * context takes a spare interpreter loaded in the background (the first context takes the shared interpreter when it
 * is loaded and idle) and starts loading the next spare, so a context waits for a Pyodide load only when contexts are
 * created faster than spares load.
 */
export class PythonInterpreters {
  private shared = new PythonRuntime();
  private readonly contexts = new Map<string, PythonRuntime>();
  private spare: PythonRuntime | undefined;

  /** The Pyodide version once an interpreter has loaded, else "". */
  get pyodideVersion(): string {
    return this.shared.pyodideVersion;
  }

  /**
   * Starts loading the shared interpreter in the background, without holding the process open. Called when a sandbox
   * is created, so the first `runCode` waits only for what is left of the load.
   */
  warm(): void {
    void this.shared.warm();
  }

  private ensureSpare(): void {
    if (this.spare) return;
    this.spare = new PythonRuntime();
    void this.spare.warm();
  }

  /**
   * Creates a context in an interpreter of its own. With `preload` (the sandbox's `preloadPython`), interpreters
   * that will be needed next (the next spare, a replacement for a taken shared one) load in the background.
   */
  async createContext(contextId: string, options: { preload: boolean }): Promise<void> {
    let runtime = this.spare;
    this.spare = undefined;
    if (!runtime && this.shared.idle) {
      // No spare yet (the first context): take the loaded, idle shared interpreter, and load a new shared one.
      runtime = this.shared;
      this.shared = new PythonRuntime();
      if (options.preload) void this.shared.warm();
    }
    runtime ??= new PythonRuntime();
    this.contexts.set(contextId, runtime);
    try {
      await runtime.createContext(contextId);
    } catch (error) {
      this.contexts.delete(contextId);
      runtime.terminate();
      throw error;
    } finally {
      if (options.preload) this.ensureSpare();
    }
  }

  /** Runs code in its context's interpreter, or in the shared one. */
  run(request: PythonRunRequest): Promise<PythonRunOutcome> {
    if (request.contextId === null) return this.shared.run(request);
    const runtime = this.contexts.get(request.contextId);
    // An unknown context id goes to a runtime that does not know it, which raises the typed "context lost" error.
    return (runtime ?? this.shared).run(request);
  }

  /** Ends the interpreters of contexts whose sandbox was destroyed. */
  dropContexts(contextIds: readonly string[]): void {
    for (const contextId of contextIds) {
      this.contexts.get(contextId)?.terminate();
      this.contexts.delete(contextId);
    }
  }
}

let processInterpreters: PythonInterpreters | undefined;

/** The process-wide Python interpreters (created on first use). */
export function sharedPythonInterpreters(): PythonInterpreters {
  processInterpreters ??= new PythonInterpreters();
  return processInterpreters;
}
