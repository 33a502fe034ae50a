/**
 * File watching and terminals from the sandbox agent that core attaches to a driver declaring `codeAgent` (ADR 0049):
 * a host-process driver, the agent run by the host's python3 (inotify on the host's file system).
 */
import { mkdtemp, rm, symlink } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { FileWatchEvent, Sandbox, SandboxProviderV1 } from "../src/index.ts";
import { createSandboxFromDriver, defineCapabilities, type ResolvedCreateOptions, type SandboxDriverV1 } from "../src/adapter.ts";
import { caught } from "./support/caught.ts";
import { createHostProcessDriver } from "./support/host-process-driver.ts";

const OPTIONS = {
  network: { egress: "deny" },
  timeoutMs: 60_000,
  env: {},
  secrets: {},
  metadata: {},
  mounts: [],
  user: "default",
  allowFake: false,
  settings: {},
} as unknown as ResolvedCreateOptions;

const provider: SandboxProviderV1 = {
  specificationVersion: "sbx-v1",
  backend: "host-agent-watch",
  packageName: "none",
  capabilities: defineCapabilities({
    STATEFUL_CODE: true,
    BACKGROUND_COMMANDS: true,
    STDIN: true,
    FILE_WATCH: true,
    PTY: true,
    languages: ["python"],
  }),
  isolating: false,
  detect: async () => ({ backend: "host-agent-watch", usable: true, reason: "", remedy: "", isolating: false }),
  create: async () => {
    throw new Error("not used");
  },
};

describe("file watching and terminals through the agent core attaches (codeAgent)", () => {
  let workspace: string;
  let sandbox: Sandbox;

  beforeEach(async () => {
    workspace = await mkdtemp(join(tmpdir(), "sbx-agent-watch-"));
    const host = createHostProcessDriver(workspace);
    const driver: SandboxDriverV1 = {
      id: host.id,
      workspace: host.workspace,
      audit: host.audit,
      spawn: (request) => host.spawn(request),
      destroy: () => host.destroy(),
      codeAgent: {},
    };
    sandbox = createSandboxFromDriver(driver, { provider, target: "", options: OPTIONS });
  });

  afterEach(async () => {
    await sandbox.kill();
    await rm(workspace, { recursive: true, force: true });
  });

  it("watches with inotify: events in order, a rename paired, paths absolute", async () => {
    await sandbox.files.mkdir("watched");
    const watcher = await sandbox.files.watch("watched", { recursive: true });
    const iterator = watcher[Symbol.asyncIterator]();
    await sandbox.commands.run(
      "mkdir watched/sub && printf a > watched/sub/a.txt && mv watched/sub/a.txt watched/b.txt && rm watched/b.txt && : > watched/end",
    );
    const seen: FileWatchEvent[] = [];
    while (!seen.some((event) => event.path.endsWith("/end"))) seen.push((await iterator.next()).value as FileWatchEvent);
    const lines = seen.map(
      (event) => `${event.type} ${event.path.slice(workspace.length + 1)}${event.from ? ` from ${event.from.slice(workspace.length + 1)}` : ""}`,
    );
    expect(lines.filter((line) => !line.startsWith("write"))).toEqual([
      "create watched/sub",
      "create watched/sub/a.txt",
      "rename watched/b.txt from watched/sub/a.txt",
      "remove watched/b.txt",
      "create watched/end",
    ]);
    await watcher.stop();
    expect((await iterator.next()).done).toBe(true);
  });

  it("refuses a link out of the workspace (PathError escapes-workspace) and a missing directory (FileNotFoundError)", async () => {
    await symlink(tmpdir(), join(workspace, "out"));
    const escaped = await caught(() => sandbox.files.watch("out"));
    expect(escaped.code).toBe("SBX_PATH");
    expect((escaped as unknown as { reason: string }).reason).toBe("escapes-workspace");
    expect((await caught(() => sandbox.files.watch("missing"))).code).toBe("SBX_FILE_NOT_FOUND");
  });

  it("ends a watch whose directory is removed with FileNotFoundError, not silently", async () => {
    await sandbox.files.mkdir("doomed");
    const watcher = await sandbox.files.watch("doomed");
    const iterator = watcher[Symbol.asyncIterator]();
    await sandbox.commands.run("rmdir doomed");
    const error = await caught(async () => {
      for (;;) if ((await iterator.next()).done) return;
    });
    expect(error.code).toBe("SBX_FILE_NOT_FOUND");
  });

  it("refuses a terminal without the backend's enforcement: its kill could not be verified", async () => {
    const error = await caught(() => sandbox.terminals.create({ command: "cat", onData: () => {} }));
    expect(error.code).toBe("SBX_PROVIDER");
  });
});
