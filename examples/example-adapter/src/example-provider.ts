import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdir, readFile, realpath, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { PolicyNotEnforcedError, SandboxNotFoundError, type SandboxProviderV1 } from "@sbx/core";
import { defineCapabilities, type SandboxDriverV1 } from "@sbx/core/adapter";
import { exampleAudit, type ExampleSandboxRecord } from "./example-audit.js";
import { spawnInNamespace } from "./spawn-in-namespace.js";

const run = promisify(execFile);
/** Settings of the example provider. */
export interface ExampleProviderSettings {
  /** Folder holding one sub-folder per sandbox. Default `<os tmpdir>/sbx-example`. */
  root?: string;
}

/** The manifest: everything not listed is off (core refuses it). Code contexts come from the sbx sandbox agent. */
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
 * An example third-party backend: each sandbox is a host folder, each command runs in fresh Linux PID (and, with
 * egress denied, network) namespaces through `unshare`. The driver writes only `spawn`, `destroy`, `probe` and the
 * audit record (ADR 0037): core defaults every file operation over `spawn` and runs code through the sandbox agent
 * (`codeAgent`). NOT an isolation boundary: commands share the host filesystem and user.
 */
export function createExampleProvider(settings: ExampleProviderSettings = {}): SandboxProviderV1 {
  const root = settings.root ?? join(tmpdir(), "sbx-example");
  const timers = new Map<string, NodeJS.Timeout>();
  // What ends with a sandbox, after its folder (so a command running at the end sees the loss, ADR 0023).
  const running = new Map<string, Set<() => Promise<void>>>();
  async function destroy(id: string): Promise<void> {
    clearTimeout(timers.get(id));
    timers.delete(id);
    await rm(join(root, id), { recursive: true, force: true });
    const stops = [...(running.get(id) ?? [])];
    running.delete(id);
    await Promise.allSettled(stops.map((stop) => stop()));
  }
  async function open(id: string, record: ExampleSandboxRecord, audit: SandboxDriverV1["audit"]): Promise<SandboxDriverV1> {
    const folder = join(root, id);
    const exists = () =>
      stat(folder).then(
        () => true,
        () => false,
      );
    const gone = () =>
      new SandboxNotFoundError({ sandboxId: id, backend: "example", message: `Example sandbox ${id} is gone (its folder was removed).` });
    if (!timers.has(id)) timers.set(id, setTimeout(() => void destroy(id), Math.max(0, record.expiresAt - Date.now())).unref());
    const stops = running.get(id) ?? running.set(id, new Set()).get(id)!;
    return {
      id,
      workspace: await realpath(join(folder, "workspace")),
      audit,
      codeAgent: {},
      probe: async () => ((await exists()) ? "running" : "gone"),
      destroy: () => destroy(id),
      async spawn(request) {
        // A sandbox whose folder is gone (removed out of band, or expired) is lost: every call says so.
        if (!(await exists())) throw gone();
        const spawned = spawnInNamespace(request, { denyEgress: record.network.egress === "deny" });
        const stop = () => spawned.kill();
        stops.add(stop);
        // Watchdog: a folder removed behind sbx's back ends the running command with the loss (ADR 0029).
        const lost = new Promise<never>((_, reject) => {
          const watch = async () => {
            if (await exists()) return;
            clearInterval(watchdog);
            await spawned.kill();
            reject(gone());
          };
          const watchdog = setInterval(() => void watch(), WATCHDOG_INTERVAL_MS);
          void spawned.exit.finally(() => {
            clearInterval(watchdog);
            stops.delete(stop);
          });
        });
        lost.catch(() => {});
        const exit = spawned.exit.then(async (value) => {
          if (!(await exists())) throw gone();
          return value;
        });
        return { ...spawned, exit: Promise.race([lost, exit]) };
      },
    };
  }

  return {
    specificationVersion: "sbx-v1",
    backend: "example",
    packageName: "@sbx/example-adapter",
    capabilities: CAPABILITIES,
    isolating: false,
    // The settings it knows (a zod object schema's `shape` works too): core refuses any other key (ADR 0029).
    settingsSchema: { shape: { root: "folder holding one sub-folder per sandbox" } },
    async detect() {
      const status = { backend: "example", isolating: false, usable: true, reason: "unshare can create PID and network namespaces", remedy: "" };
      if (process.platform !== "linux")
        return { ...status, usable: false, reason: `needs Linux namespaces; this is ${process.platform}`, remedy: "Run on Linux." };
      try {
        await run("unshare", ["--pid", "--fork", "--kill-child", "--mount-proc", "--net", "true"], { timeout: 10_000 });
        return status;
      } catch (error) {
        const remedy = "Install util-linux and run as root (or with CAP_SYS_ADMIN).";
        return { ...status, usable: false, reason: `unshare failed: ${(error as Error).message}`, remedy };
      }
    },
    async create({ options }) {
      // Commands run as this process's user: "root" is what was asked only when that user is root.
      if (options.user === "root" && process.getuid?.() !== 0) {
        const message = `user: "root" was asked for, but the example adapter runs commands as this process's user; nothing was created.`;
        throw new PolicyNotEnforcedError({ backend: "example", policy: "user", message });
      }
      const id = `sbx-example-${randomBytes(8).toString("hex")}`;
      const record: ExampleSandboxRecord = {
        network: options.network,
        createdAt: new Date().toISOString(),
        expiresAt: Date.now() + options.timeoutMs,
      };
      try {
        await mkdir(join(root, id, "workspace"), { recursive: true });
        await writeFile(join(root, id, "sandbox.json"), JSON.stringify(record));
        return await open(id, record, await exampleAudit(record, options));
      } catch (error) {
        await destroy(id); // Nothing half-made is left behind.
        throw error;
      }
    },
    async connect({ sandboxId, options }) {
      const file = join(root, sandboxId, "sandbox.json");
      const text = ID_PATTERN.test(sandboxId) ? await readFile(file, "utf8").catch(() => undefined) : undefined;
      const record = text === undefined ? undefined : (JSON.parse(text) as ExampleSandboxRecord);
      if (!record || record.expiresAt <= Date.now())
        throw new SandboxNotFoundError({ sandboxId, backend: "example", message: `No live example sandbox ${sandboxId}.` });
      return open(sandboxId, record, await exampleAudit(record, options));
    },
  };
}
