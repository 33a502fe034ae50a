import { Sandbox } from "e2b";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { skipDockerTests } from "./docker-availability.js";
import { emulatorForSuite } from "./emulator-fixture.js";

/** Waits until `check` holds, polling; fails after `timeoutMs` with `describe()`. */
async function eventually(check: () => boolean, describe: () => string, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out: ${describe()}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe.skipIf(skipDockerTests)("envd WatchDir and PTY through the unmodified e2b SDK", () => {
  const emulator = emulatorForSuite();
  let sandbox: Sandbox;
  beforeAll(async () => {
    sandbox = await Sandbox.create(emulator().connectionOptions);
  });
  afterAll(async () => {
    await sandbox?.kill();
  });

  it("watchDir reports what inotify saw inside, as envd's fsnotify does: rename of the old name, create of the new", async () => {
    await sandbox.files.makeDir("/home/user/watched");
    const events: Array<{ name: string; type: string; entryType?: string }> = [];
    const handle = await sandbox.files.watchDir(
      "/home/user/watched",
      (event) => {
        events.push({ name: event.name, type: event.type, entryType: event.entry?.type });
      },
      { includeEntry: true },
    );
    await sandbox.commands.run(
      "cd /home/user/watched && mkdir sub && printf a > a.txt && mv a.txt b.txt && rm b.txt && printf x > sub/deep && : > end",
    );
    await eventually(
      () => events.some((event) => event.name === "end"),
      () => JSON.stringify(events),
    );
    await handle.stop();
    const lines = events.map((event) => `${event.type} ${event.name}`);
    expect(lines.filter((line) => !line.startsWith("chmod") && !line.startsWith("write"))).toEqual([
      "create sub",
      "create a.txt",
      "rename a.txt",
      "create b.txt",
      "remove b.txt",
      "create end",
    ]);
    expect(lines).toContain("write a.txt");
    expect(events.find((event) => event.name === "sub")?.entryType).toBe("dir");
    // The entry is read when the event is handled, as envd does (a stat): a.txt may be renamed by then (it was under
    // load in CI), so the file checked is one that stays.
    expect(events.find((event) => event.name === "end" && event.type === "create")?.entryType).toBe("file");
  });

  it("watchDir with recursive sees new subdirectories; a missing path is not found, a file is refused", async () => {
    await sandbox.files.makeDir("/home/user/tree/old");
    const names: string[] = [];
    const handle = await sandbox.files.watchDir("/home/user/tree", (event) => void names.push(`${event.type} ${event.name}`), { recursive: true });
    await sandbox.commands.run(
      "mkdir -p /home/user/tree/new/deeper && sleep 0.5 && : > /home/user/tree/new/deeper/file && : > /home/user/tree/old/x",
    );
    await eventually(
      () => names.includes("create old/x"),
      () => JSON.stringify(names),
    );
    await handle.stop();
    expect(names).toContain("create new");
    expect(names).toContain("create new/deeper/file");
    await expect(sandbox.files.watchDir("/home/user/missing", () => {})).rejects.toThrow(/not found/i);
    await sandbox.files.write("/home/user/plain.txt", "x");
    await expect(sandbox.files.watchDir("/home/user/plain.txt", () => {})).rejects.toThrow(/not a directory/i);
  });

  it("pty.create runs an interactive shell on a terminal of the asked size; resize, input and the exit code go through", async () => {
    let output = "";
    const terminal = await sandbox.pty.create({ cols: 91, rows: 27, onData: (data) => void (output += Buffer.from(data).toString("utf8")) });
    await sandbox.pty.sendInput(terminal.pid, new TextEncoder().encode("stty size\n"));
    await eventually(
      () => output.includes("27 91"),
      () => output,
    );
    await sandbox.pty.resize(terminal.pid, { cols: 100, rows: 30 });
    await sandbox.pty.sendInput(terminal.pid, new TextEncoder().encode("stty size; exit 3\n"));
    const exit = await terminal.wait().catch((error: { exitCode?: number }) => error);
    expect((exit as { exitCode?: number }).exitCode).toBe(3);
    expect(output).toContain("30 100");
  });
});
