import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdir, readFile, realpath, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { defineCapabilities, SandboxNotFoundError, type BackendStatus, type DriverAudit, type NetworkPolicy, type ResolvedCreateOptions, type SandboxDriverV1, type SandboxProviderV1 } from "@sbx/core";
import { withCodeAgent } from "@sbx/core/adapter";
import { spawnInNamespace } from "./spawn-in-namespace.js";
import { WorkspaceFiles } from "./workspace-files.js";

const run = promisify(execFile);

/** Settings of the example provider. */
export interface ExampleProviderSettings {
  /** Folder holding one sub-folder per sandbox. Default `<os tmpdir>/sbx-example`. */
  root?: string;
}

/** What is kept on disk next to a sandbox's workspace, so `connect()` (from any process) restores its policy. */
interface SandboxState {
  readonly network: NetworkPolicy;
  readonly createdAt: string;
  readonly expiresAt: number;
}

/**
 * The manifest: declared once, never changed. Everything not listed is off, and core refuses it for us with
 * `CapabilityNotSupportedError` (no allowlist, no mounts, no limits). Code contexts and rich results cost one line:
 * the driver is wrapped with core's `withCodeAgent`, which runs the sbx sandbox agent through our own `spawn`.
 */
const CAPABILITIES = defineCapabilities({ STATEFUL_CODE: true, RICH_RESULTS: true, BACKGROUND_COMMANDS: true, STDIN: true, RECONNECT: true, languages: ["python"] });

const ID_PATTERN = /^sbx-example-[0-9a-f]{16}$/;

/**
 * An example third-party backend: each sandbox is a host folder, and each command runs in fresh Linux PID (and,
 * with egress denied, network) namespaces through `unshare`. It is NOT an isolation boundary: commands share the
 * host filesystem and user. It exists to show how little an adapter has to write.
 */
export function createExampleProvider(settings: ExampleProviderSettings = {}): SandboxProviderV1 {
  const root = settings.root ?? join(tmpdir(), "sbx-example");
  const hostPath = process.env.PATH ?? "/usr/local/bin:/usr/bin:/bin";
  const timers = new Map<string, NodeJS.Timeout>();
  let version: Promise<string> | undefined;

  /** Stops each open sandbox's agent: a sandbox that expires on its timer must not leave its agent running. */
  const agents = new Map<string, Set<() => Promise<void>>>();

  async function destroy(id: string): Promise<void> {
    clearTimeout(timers.get(id));
    timers.delete(id);
    const stops = [...(agents.get(id) ?? [])];
    agents.delete(id);
    await Promise.allSettled(stops.map((stop) => stop()));
    await rm(join(root, id), { recursive: true, force: true });
  }

  async function open(id: string, state: SandboxState, options: ResolvedCreateOptions): Promise<SandboxDriverV1> {
    const folder = join(root, id);
    const workspace = await realpath(join(folder, "workspace"));
    const files = new WorkspaceFiles(workspace);
    // A sandbox whose folder is gone (removed out of band, or expired) is lost: every call says so.
    const alive = async () => {
      if (!(await stat(folder).then(() => true, () => false))) throw new SandboxNotFoundError({ sandboxId: id, backend: "example", message: `Example sandbox ${id} is gone (its folder was removed).` });
    };
    const checked = <Arguments extends unknown[], Result>(work: (...args: Arguments) => Promise<Result>) => async (...args: Arguments): Promise<Result> => {
      await alive();
      return work(...args);
    };
    const denyEgress = state.network.egress === "deny";
    if (!timers.has(id)) timers.set(id, setTimeout(() => void destroy(id), Math.max(0, state.expiresAt - Date.now())).unref());
    version ??= run("unshare", ["--version"]).then(({ stdout }) => stdout.trim(), () => "unknown");
    const audit: DriverAudit = {
      backendVersion: await version,
      policies: {
        network: {
          requested: options.network,
          applied: { egress: state.network.egress },
          enforcement: denyEgress ? "unshare --net per command: a new network namespace with only a loopback interface, down" : "host network namespace: unrestricted egress",
        },
        limits: { requested: options.limits ?? null, applied: null, enforcement: "none: RESOURCE_LIMITS is off, host defaults apply" },
        mounts: { requested: options.mounts, applied: [], enforcement: "none: HOST_MOUNTS is off" },
        user: { requested: options.user, applied: `host uid ${process.getuid?.() ?? "unknown"}`, enforcement: "commands run as the host user of this process: not an isolation boundary" },
        lifetime: { requested: options.timeoutMs, applied: state.expiresAt - Date.parse(state.createdAt), enforcement: "a timer in the creating process removes the folder; not enforced if that process dies" },
      },
      notes: ["example adapter: not an isolation boundary; the workspace is a host folder and commands share the host filesystem"],
    };
    const driver = withCodeAgent({
      id,
      workspace,
      audit,
      spawn: checked(async (request) => {
        const process = spawnInNamespace(request, { denyEgress, hostPath });
        return { ...process, exit: process.exit.then(async (value) => (await alive(), value)) };
      }),
      readFile: checked((path: string) => files.readFile(path)),
      writeFile: checked((path: string, data: ReadableStream<Uint8Array>) => files.writeFile(path, data)),
      list: checked((path: string) => files.list(path)),
      stat: checked((path: string) => files.stat(path)),
      remove: checked((path: string, { recursive }: { recursive: boolean }) => files.remove(path, recursive)),
      mkdir: checked((path: string) => files.mkdir(path)),
      rename: checked((from: string, to: string) => files.rename(from, to)),
      destroy: () => destroy(id),
    }, { backend: "example" });
    if (!agents.has(id)) agents.set(id, new Set());
    agents.get(id)!.add(() => driver.agent.stop());
    return driver;
  }

  return {
    specificationVersion: "sbx-v1",
    backend: "example",
    packageName: "@sbx/example-adapter",
    capabilities: CAPABILITIES,
    isolating: false,

    async detect(): Promise<BackendStatus> {
      const base = { backend: "example", isolating: false };
      if (process.platform !== "linux") return { ...base, usable: false, reason: `needs Linux namespaces; this is ${process.platform}`, remedy: "Run on Linux." };
      try {
        await run("unshare", ["--pid", "--fork", "--kill-child", "--mount-proc", "--net", "true"], { timeout: 10_000 });
        return { ...base, usable: true, reason: "unshare can create PID and network namespaces", remedy: "" };
      } catch (error) {
        return { ...base, usable: false, reason: `unshare failed: ${error instanceof Error ? error.message : String(error)}`, remedy: "Install util-linux and run as root (or with CAP_SYS_ADMIN)." };
      }
    },

    async create({ options }) {
      const id = `sbx-example-${randomBytes(8).toString("hex")}`;
      const state: SandboxState = { network: options.network, createdAt: new Date().toISOString(), expiresAt: Date.now() + options.timeoutMs };
      try {
        await mkdir(join(root, id, "workspace"), { recursive: true });
        await writeFile(join(root, id, "sandbox.json"), JSON.stringify(state));
        return await open(id, state, options);
      } catch (error) {
        await destroy(id); // Nothing half-made is left behind.
        throw error;
      }
    },

    async connect({ sandboxId, options }) {
      const state = ID_PATTERN.test(sandboxId)
        ? await readFile(join(root, sandboxId, "sandbox.json"), "utf8").then((text) => JSON.parse(text) as SandboxState, () => undefined)
        : undefined;
      if (!state || state.expiresAt <= Date.now()) throw new SandboxNotFoundError({ sandboxId, backend: "example", message: `No live example sandbox ${sandboxId}.` });
      return open(sandboxId, state, options);
    },
  };
}
