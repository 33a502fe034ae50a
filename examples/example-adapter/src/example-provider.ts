import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdir, readFile, realpath, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { PolicyNotEnforcedError, SandboxNotFoundError, type BackendStatus, type NetworkPolicy, type SandboxProviderV1 } from "@sbx/core";
import { defineCapabilities, type ResolvedCreateOptions, type SandboxDriverV1, posixFileOperations, withCodeAgent } from "@sbx/core/adapter";
import { spawnInNamespace } from "./spawn-in-namespace.js";
const run = promisify(execFile);

/** Settings of the example provider. */
export interface ExampleProviderSettings {
  /** Folder holding one sub-folder per sandbox. Default `<os tmpdir>/sbx-example`. */
  root?: string;
}
/** Kept next to a sandbox's workspace, so `connect()` (from any process) restores its policy. */
type SandboxState = { readonly network: NetworkPolicy; readonly createdAt: string; readonly expiresAt: number };
/** The manifest: everything not listed is off (core refuses it). Code contexts come from core's `withCodeAgent`. */
const CAPABILITIES = defineCapabilities({
  STATEFUL_CODE: true,
  RICH_RESULTS: true,
  BACKGROUND_COMMANDS: true,
  STDIN: true,
  RECONNECT: true,
  languages: ["python"],
});
const ID_PATTERN = /^sbx-example-[0-9a-f]{16}$/;
/** How often a running command's watchdog checks that its sandbox folder still exists. */
const WATCHDOG_INTERVAL_MS = 1_000;
/**
 * An example third-party backend on the thin driver contract (ADR 0020): each sandbox is a host folder, each command
 * runs in fresh Linux PID (and, with egress denied, network) namespaces through `unshare`. The driver writes only
 * `spawn`, `destroy` and the audit record; files run through `spawn` with core's POSIX helpers. NOT an isolation
 * boundary: commands share the host filesystem and user. It shows how little an adapter has to write.
 */
export function createExampleProvider(settings: ExampleProviderSettings = {}): SandboxProviderV1 {
  const root = settings.root ?? join(tmpdir(), "sbx-example");
  const timers = new Map<string, NodeJS.Timeout>();
  // What ends with a sandbox, after its folder (so a command running at the end sees the loss, ADR 0023): agent, commands.
  const stops = new Map<string, Set<() => Promise<void>>>();
  const track = (id: string, stop: () => Promise<void>) => (stops.get(id) ?? stops.set(id, new Set()).get(id)!).add(stop);
  let version: Promise<string> | undefined;
  async function destroy(id: string): Promise<void> {
    clearTimeout(timers.get(id));
    timers.delete(id);
    await rm(join(root, id), { recursive: true, force: true });
    const ending = [...(stops.get(id) ?? [])];
    stops.delete(id);
    await Promise.allSettled(ending.map((stop) => stop()));
  }
  async function open(id: string, state: SandboxState, options: ResolvedCreateOptions): Promise<SandboxDriverV1> {
    const folder = join(root, id);
    const workspace = await realpath(join(folder, "workspace"));
    // A sandbox whose folder is gone (removed out of band, or expired) is lost: every call says so.
    const alive = () =>
      stat(folder).then(
        () => {},
        () => {
          throw new SandboxNotFoundError({ sandboxId: id, backend: "example", message: `Example sandbox ${id} is gone (its folder was removed).` });
        },
      );
    const denyEgress = state.network.egress === "deny";
    if (!timers.has(id)) timers.set(id, setTimeout(() => void destroy(id), Math.max(0, state.expiresAt - Date.now())).unref());
    version ??= run("unshare", ["--version"]).then(
      ({ stdout }) => stdout.trim(),
      () => "unknown",
    );
    const thin: SandboxDriverV1 = {
      id,
      workspace,
      audit: {
        backendVersion: await version,
        policies: {
          network: {
            requested: options.network,
            applied: { egress: state.network.egress },
            enforcement: denyEgress
              ? "unshare --net per command: a new network namespace with only a loopback interface, down"
              : "host network namespace: unrestricted egress",
          },
          limits: { requested: options.limits ?? null, applied: null, enforcement: "none: RESOURCE_LIMITS is off, host defaults apply" },
          mounts: { requested: options.mounts, applied: [], enforcement: "none: HOST_MOUNTS is off" },
          user: {
            requested: options.user,
            applied: `host uid ${process.getuid?.() ?? "unknown"}`,
            enforcement: "commands run as the host user of this process: not an isolation boundary",
          },
          lifetime: {
            requested: options.timeoutMs,
            applied: state.expiresAt - Date.parse(state.createdAt),
            enforcement: "a timer in the creating process removes the folder; not enforced if that process dies",
          },
        },
        notes: ["example adapter: not an isolation boundary; the workspace is a host folder and commands share the host filesystem"],
      },
      async spawn(request) {
        await alive();
        const spawned = spawnInNamespace(request, { denyEgress }),
          stop = () => spawned.kill();
        track(id, stop);
        void spawned.exit.finally(() => stops.get(id)?.delete(stop)).catch(() => {});
        // Watchdog: a folder removed behind sbx's back (an operator, another process) ends the running command with
        // the loss, instead of letting it run to its own end (ADR 0029).
        const lost = new Promise<never>((_, reject) => {
          const watchdog = setInterval(
            () =>
              void alive().catch((error: unknown) => {
                clearInterval(watchdog);
                void spawned.kill();
                reject(error);
              }),
            WATCHDOG_INTERVAL_MS,
          );
          void spawned.exit.finally(() => clearInterval(watchdog)).catch(() => {});
        });
        lost.catch(() => {});
        return { ...spawned, exit: Promise.race([lost, spawned.exit.then(async (value) => (await alive(), value))]) };
      },
      // Files go through our own spawn with core's POSIX helpers: the same policy as core's defaults (ADR 0020).
      readFile: (path, fileOptions) => posixFileOperations(thin).readFile(path, fileOptions),
      writeFile: (path, data, fileOptions) => posixFileOperations(thin).writeFile(path, data, fileOptions),
      destroy: () => destroy(id),
    };
    const driver = withCodeAgent(thin, { backend: "example" });
    track(id, () => driver.agent.stop());
    return driver;
  }
  return {
    specificationVersion: "sbx-v1",
    backend: "example",
    packageName: "@sbx/example-adapter",
    capabilities: CAPABILITIES,
    isolating: false,
    // The settings it knows (a zod object schema's `shape` works too): core refuses any other key (ADR 0029).
    settingsSchema: { shape: { root: "folder holding one sub-folder per sandbox" } },
    async detect(): Promise<BackendStatus> {
      const base = { backend: "example", isolating: false };
      if (process.platform !== "linux")
        return { ...base, usable: false, reason: `needs Linux namespaces; this is ${process.platform}`, remedy: "Run on Linux." };
      return run("unshare", ["--pid", "--fork", "--kill-child", "--mount-proc", "--net", "true"], { timeout: 10_000 }).then(
        () => ({ ...base, usable: true, reason: "unshare can create PID and network namespaces", remedy: "" }),
        (error: Error) => ({
          ...base,
          usable: false,
          reason: `unshare failed: ${error.message}`,
          remedy: "Install util-linux and run as root (or with CAP_SYS_ADMIN).",
        }),
      );
    },
    async create({ options }) {
      // Commands run as this process's user: "root" is what was asked only when that user is root.
      if (options.user === "root" && process.getuid?.() !== 0) {
        throw new PolicyNotEnforcedError({
          backend: "example",
          policy: "user",
          message: `user: "root" was asked for, but the example adapter runs commands as this process's user (uid ${process.getuid?.() ?? "unknown"}); nothing was created.`,
        });
      }
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
        ? await readFile(join(root, sandboxId, "sandbox.json"), "utf8").then(
            (text) => JSON.parse(text) as SandboxState,
            () => undefined,
          )
        : undefined;
      if (!state || state.expiresAt <= Date.now())
        throw new SandboxNotFoundError({ sandboxId, backend: "example", message: `No live example sandbox ${sandboxId}.` });
      return open(sandboxId, state, options);
    },
  };
}
