/**
 * A tiny in-memory backend for core's unit tests. It implements the adapter primitives (SandboxDriverV1)
 * with a handful of fixed "commands" and files in a Map, so the tests exercise core's own behaviour:
 * validation, capability checks, closed state, timeouts, output caps, redaction and the audit record.
 * It runs nothing and isolates nothing.
 */
import { FileNotFoundError, type BackendStatus, type Capabilities, type FileEntry, type SandboxProviderV1 } from "../../src/index.ts";
import {
  defineCapabilities,
  type CodeRequest,
  type DriverExecution,
  type ProviderCreateRequest,
  type SandboxDriverV1,
  type SpawnedProcess,
  type SpawnRequest,
} from "../../src/adapter.ts";

/** The workspace every memory sandbox uses. */
export const MEMORY_WORKSPACE = "/workspace";

/** What a memory process records, for assertions. */
export interface MemoryProcessRecord {
  readonly request: SpawnRequest;
  killCalls: number;
  stdin: Uint8Array[];
}

/** Options for a memory driver. */
export interface MemoryDriverOptions {
  /** Sandbox id. Default `"memory-1"`. */
  id?: string;
  /** Notes put into the driver audit. */
  notes?: string[];
  /** Give the driver its own `runCode` (a code channel); otherwise core falls back to one-shot Python over spawn. */
  codeChannel?: boolean;
  /** Give the driver `createCodeContext`. */
  codeContexts?: boolean;
  /** Make `destroy()` reject with this message. */
  destroyFailure?: string;
}

const encoder = new TextEncoder();

function decodeHex(hex: string): Uint8Array {
  return Uint8Array.from(hex.match(/../g) ?? [], (pair) => Number.parseInt(pair, 16));
}

/**
 * Commands understood by `spawn` (the whole command line is matched, nothing is run):
 * - `echo <text>`: prints text and a newline.
 * - `exit <n>`: exits with n.
 * - `env <NAME>`: prints the variable's value.
 * - `pwd`: prints the working directory.
 * - `cat`: copies stdin to stdout when stdin is closed; `cat <path> ...` prints a file from the Map (exit 1 if missing).
 * - `repeat <count> <char>`: prints `char` count times (one chunk).
 * - `chunks <hex> <hex> ...`: prints each hex string as one separate chunk of bytes.
 * - `hang [text]`: prints text (default "started") and never exits until killed (exit 137).
 * - `block-stdin`: never reads stdin (writes to it do not complete) and never exits until killed.
 * - `fail <message>`: spawn itself rejects with a plain Error(message), like a backend SDK would.
 * Anything else prints to stderr and exits 127.
 */
export class MemoryDriver implements SandboxDriverV1 {
  readonly id: string;
  readonly workspace = MEMORY_WORKSPACE;
  readonly files = new Map<string, Uint8Array>();
  readonly directories = new Set<string>([MEMORY_WORKSPACE]);
  readonly processes: MemoryProcessRecord[] = [];
  destroyCalls = 0;
  readonly audit;
  runCode?: (request: CodeRequest) => Promise<DriverExecution>;
  createCodeContext?: (request: { language: string; cwd: string; signal?: AbortSignal }) => Promise<{ id: string; language: string }>;
  /** Code run through the code channel, for assertions. */
  readonly codeRequests: CodeRequest[] = [];

  constructor(
    private readonly driverOptions: MemoryDriverOptions = {},
    createOptions?: ProviderCreateRequest["options"],
  ) {
    this.id = driverOptions.id ?? "memory-1";
    const network = createOptions?.network ?? { egress: "deny" };
    this.audit = {
      backendVersion: "memory 0.0.0",
      policies: {
        network: { requested: network, applied: network, enforcement: "none: the memory driver runs nothing" },
        limits: { requested: createOptions?.limits ?? null, applied: null, enforcement: "none" },
        mounts: { requested: createOptions?.mounts ?? [], applied: [], enforcement: "none" },
        user: { requested: createOptions?.user ?? "default", applied: "default", enforcement: "none" },
        lifetime: { requested: createOptions?.timeoutMs ?? 600_000, applied: createOptions?.timeoutMs ?? 600_000, enforcement: "none" },
      },
      notes: driverOptions.notes ?? [],
    };
    if (driverOptions.codeChannel) this.runCode = (request) => this.runCodeInMemory(request);
    if (driverOptions.codeContexts) {
      let next = 0;
      this.createCodeContext = async (request) => ({ id: `context-${++next}`, language: request.language });
    }
  }

  async spawn(request: SpawnRequest): Promise<SpawnedProcess> {
    const [name = "", ...rest] = request.command.split(" ");
    const argument = rest.join(" ");
    if (name === "fail") throw new Error(argument);
    const record: MemoryProcessRecord = { request, killCalls: 0, stdin: [] };
    this.processes.push(record);
    let resolveExit!: (value: { exitCode: number }) => void;
    const exit = new Promise<{ exitCode: number }>((resolve) => (resolveExit = resolve));
    let exited = false;
    const finish = (exitCode: number) => {
      if (exited) return;
      exited = true;
      resolveExit({ exitCode });
    };
    const out = (text: string | Uint8Array) => request.onStdout(typeof text === "string" ? encoder.encode(text) : text);
    // Output is delivered asynchronously, as a real backend would.
    queueMicrotask(() => {
      switch (name) {
        case "echo":
          out(`${argument}\n`);
          return finish(0);
        case "exit":
          return finish(Number(argument));
        case "env":
          out(request.env[argument] ?? "");
          return finish(0);
        case "pwd":
          out(request.cwd);
          return finish(0);
        case "cat": {
          if (argument === "") return; // copies stdin; finishes on closeStdin
          const data = this.files.get(rest[0]!);
          if (data) out(data);
          return finish(data ? 0 : 1);
        }
        case "repeat": {
          const [count, character = "x"] = rest;
          out(character.repeat(Number(count)));
          return finish(0);
        }
        case "chunks":
          for (const hex of rest) out(decodeHex(hex));
          return finish(0);
        case "hang":
          out(`${argument || "started"}\n`);
          return; // finishes on kill
        case "block-stdin":
          return; // finishes on kill
        default:
          request.onStderr(encoder.encode(`memory: unknown command ${name}\n`));
          return finish(127);
      }
    });
    return {
      pid: String(this.processes.length),
      exit,
      writeStdin: async (data) => {
        record.stdin.push(data.slice());
        if (name === "block-stdin") await exit; // never reads: the write only ends when the process does
      },
      closeStdin: async () => {
        if (name === "cat") {
          for (const chunk of record.stdin) out(chunk);
          finish(0);
        }
      },
      kill: async () => {
        record.killCalls++;
        finish(137);
      },
    };
  }

  private async runCodeInMemory(request: CodeRequest): Promise<DriverExecution> {
    this.codeRequests.push(request);
    if (request.code === "hang") {
      await new Promise<void>((resolve) => {
        if (request.signal.aborted) resolve();
        request.signal.addEventListener("abort", () => resolve(), { once: true });
      });
      return { error: null, results: null };
    }
    if (request.code.startsWith("raise ")) {
      const name = request.code.slice("raise ".length);
      return { error: { name, value: "raised", traceback: `Traceback: ${name}` }, results: null };
    }
    request.onStdout(request.code);
    return { error: null, results: [{ isMainResult: true, data: { "text/plain": request.code } }] };
  }

  private entry(path: string): FileEntry {
    const name = path.split("/").pop() ?? "";
    if (this.directories.has(path)) return { name, path, type: "directory", size: 0, modifiedAt: null };
    const data = this.files.get(path);
    if (!data) throw new FileNotFoundError({ path, backend: "memory" });
    return { name, path, type: "file", size: data.byteLength, modifiedAt: null };
  }

  async readFile(path: string): Promise<ReadableStream<Uint8Array>> {
    const data = this.files.get(path);
    if (!data) throw new FileNotFoundError({ path, backend: "memory" });
    return new ReadableStream({
      start(controller) {
        controller.enqueue(data.slice());
        controller.close();
      },
    });
  }

  async writeFile(path: string, data: ReadableStream<Uint8Array>): Promise<void> {
    const chunks: Uint8Array[] = [];
    for await (const chunk of data as unknown as AsyncIterable<Uint8Array>) chunks.push(chunk);
    this.files.set(path, Buffer.concat(chunks));
  }

  async list(path: string): Promise<FileEntry[]> {
    if (!this.directories.has(path)) throw new FileNotFoundError({ path, backend: "memory" });
    const children = [...this.files.keys(), ...this.directories].filter(
      (candidate) => candidate.startsWith(`${path}/`) && !candidate.slice(path.length + 1).includes("/"),
    );
    return children.map((child) => this.entry(child));
  }

  async stat(path: string): Promise<FileEntry> {
    return this.entry(path);
  }

  async remove(path: string): Promise<void> {
    if (!this.files.delete(path) && !this.directories.delete(path)) throw new FileNotFoundError({ path, backend: "memory" });
  }

  async mkdir(path: string): Promise<void> {
    this.directories.add(path);
  }

  async rename(from: string, to: string): Promise<void> {
    const data = this.files.get(from);
    if (!data) throw new FileNotFoundError({ path: from, backend: "memory" });
    this.files.delete(from);
    this.files.set(to, data);
  }

  async destroy(): Promise<void> {
    this.destroyCalls++;
    if (this.driverOptions.destroyFailure) throw new Error(this.driverOptions.destroyFailure);
  }
}

/** Options for a memory provider. */
export interface MemoryProviderOptions {
  /** Backend name. Default `"memory"`. */
  backend?: string;
  /** Capability manifest. Default: background commands and stdin on, `languages: ["python"]`. */
  capabilities?: Capabilities;
  /** What `detect()` reports. Default usable. */
  status?: Partial<BackendStatus>;
  /** Protocol version to claim. Default `"sbx-v1"`. */
  specificationVersion?: string;
  /** Options for each driver created. */
  driver?: MemoryDriverOptions;
  /** Make `create()` reject with a plain Error with this message. */
  createFailure?: string;
  /** Whether the provider implements `connect`. */
  connectable?: boolean;
  /** The provider's `settingsSchema` (an object whose `shape` names the known settings). Default: none. */
  settingsSchema?: { readonly shape: Readonly<Record<string, unknown>> };
}

/** A memory provider plus the drivers it created, for assertions. */
export type MemoryProvider = SandboxProviderV1 & { readonly drivers: MemoryDriver[]; detectCalls: number };

/** Default memory manifest: background commands and stdin, python for runCode. */
export const MEMORY_CAPABILITIES = defineCapabilities({ BACKGROUND_COMMANDS: true, STDIN: true, languages: ["python"] });

/** Makes an in-memory provider. */
export function createMemoryProvider(options: MemoryProviderOptions = {}): MemoryProvider {
  const backend = options.backend ?? "memory";
  const drivers: MemoryDriver[] = [];
  const provider: MemoryProvider = {
    specificationVersion: (options.specificationVersion ?? "sbx-v1") as "sbx-v1",
    backend,
    packageName: `@sbx-test/${backend}`,
    capabilities: options.capabilities ?? MEMORY_CAPABILITIES,
    isolating: false,
    ...(options.settingsSchema ? { settingsSchema: options.settingsSchema } : {}),
    drivers,
    detectCalls: 0,
    async detect() {
      provider.detectCalls++;
      return { backend, usable: true, reason: "in memory", remedy: "", isolating: false, ...options.status };
    },
    async create(request) {
      if (options.createFailure) throw new Error(options.createFailure);
      const driver = new MemoryDriver({ ...options.driver, id: options.driver?.id ?? `${backend}-${drivers.length + 1}` }, request.options);
      drivers.push(driver);
      return driver;
    },
    ...(options.connectable
      ? {
          async connect(request: { sandboxId: string; options: ProviderCreateRequest["options"] }) {
            const driver = new MemoryDriver({ ...options.driver, id: request.sandboxId }, request.options);
            drivers.push(driver);
            return driver;
          },
        }
      : {}),
  };
  return provider;
}
