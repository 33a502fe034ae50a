import { expect } from "vitest";
import type { FileWatcher, FileWatchEvent, Sandbox } from "@sbx/core";
import {
  describeGroup,
  expectCapabilityRefused,
  expectSbxError,
  type ContractHarness,
  type SandboxContractOptions,
  type SandboxProviderFactoryForContract,
} from "../harness.js";

/** How long a test waits for an event it expects before failing (generous: the machine may be loaded). */
const EVENT_WAIT_MS = 30_000;

/**
 * Reads events until one matches `until`, or fails after `EVENT_WAIT_MS` with what was seen. The iterator is kept
 * open (a later read continues where this one stopped).
 */
async function readUntil(
  iterator: AsyncIterator<FileWatchEvent>,
  until: (event: FileWatchEvent) => boolean,
  seen: FileWatchEvent[] = [],
): Promise<FileWatchEvent[]> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(
      () => reject(new Error(`no matching event within ${EVENT_WAIT_MS} ms; seen: ${JSON.stringify(seen.slice(-20))}`)),
      EVENT_WAIT_MS,
    );
  });
  try {
    for (;;) {
      const next = await Promise.race([iterator.next(), timeout]);
      if (next.done) throw new Error(`the watch ended before a matching event; seen: ${JSON.stringify(seen.slice(-20))}`);
      seen.push(next.value);
      if (until(next.value)) return seen;
    }
  } finally {
    clearTimeout(timer);
  }
}

/**
 * The portable form of a sequence: consecutive duplicates merged, and a `write` right after the `create` of the same
 * path dropped (creating a file with content is one create on some backends, a create and a write on others).
 */
function normalised(events: readonly FileWatchEvent[], workspace: string): string[] {
  const lines: string[] = [];
  let previous: FileWatchEvent | undefined;
  for (const event of events) {
    const line = `${event.type} ${event.path.slice(workspace.length + 1)}${event.from ? ` from ${event.from.slice(workspace.length + 1)}` : ""}${event.isDirectory ? "/" : ""}`;
    const duplicate = lines.at(-1) === line;
    const writeAfterCreate = event.type === "write" && previous?.type === "create" && previous.path === event.path;
    previous = event;
    if (!duplicate && !writeAfterCreate) lines.push(line);
  }
  return lines;
}

/** Starts a watch and returns it with its iterator. */
async function watching(sandbox: Sandbox, path: string, options?: Parameters<Sandbox["files"]["watch"]>[1]) {
  const watcher: FileWatcher = await sandbox.files.watch(path, options);
  return { watcher, iterator: watcher[Symbol.asyncIterator]() };
}

/** Registers the file watching tests (`FILE_WATCH`, ADR 0049), or their refusal when it is off. */
export function registerFileWatchTests(harness: ContractHarness): void {
  const { contractTest, capabilities } = harness;

  if (!capabilities.FILE_WATCH) {
    contractTest("file-watch.refused", "files.watch() raises SBX_CAPABILITY_NOT_SUPPORTED when FILE_WATCH is off", async () => {
      await using sandbox = await harness.createSandbox();
      await expectCapabilityRefused(harness, () => sandbox.files.watch("."), "FILE_WATCH");
    });
    return;
  }

  contractTest(
    "file-watch.events-in-order",
    "changes made by commands inside the sandbox arrive as create, write, rename and remove events, in order; a non-recursive watch sees no deeper change",
    async () => {
      await using sandbox = await harness.createSandbox();
      await sandbox.files.write("watched/existing.txt", "before");
      const { watcher, iterator } = await watching(sandbox, "watched");
      expect(watcher.path).toBe(`${sandbox.workspace}/watched`);
      for (const command of [
        "mkdir watched/sub && printf a > watched/a.txt",
        "printf b >> watched/existing.txt",
        "mv watched/a.txt watched/b.txt",
        "rm watched/b.txt",
        "printf deep > watched/sub/inner.txt",
        ": > watched/end-marker",
      ]) {
        expect((await sandbox.commands.run(command)).exitCode, command).toBe(0);
      }
      const seen = await readUntil(iterator, (event) => event.path.endsWith("/end-marker"));
      // A backend that cannot pair a rename's two names declares it (fileWatchRenames: "split"): a remove and a create.
      const renamed =
        harness.options.fileWatchRenames === "split" ? ["remove watched/a.txt", "create watched/b.txt"] : ["rename watched/b.txt from watched/a.txt"];
      expect(normalised(seen, sandbox.workspace)).toEqual([
        "create watched/sub/",
        "create watched/a.txt",
        "write watched/existing.txt",
        ...renamed,
        "remove watched/b.txt",
        "create watched/end-marker",
      ]);
      await watcher.stop();
      expect((await iterator.next()).done, "iteration ends after stop()").toBe(true);
    },
  );

  contractTest(
    "file-watch.recursive",
    "a recursive watch sees changes in existing and newly created subdirectories, with their full paths",
    async () => {
      await using sandbox = await harness.createSandbox();
      await sandbox.files.mkdir("tree/old");
      const { watcher, iterator } = await watching(sandbox, "tree", { recursive: true });
      expect((await sandbox.commands.run("printf x > tree/old/in-old.txt && mkdir -p tree/new/deeper")).exitCode).toBe(0);
      // The new directory's watch is in place once its create was seen; a file made after that must be seen too.
      const first = await readUntil(iterator, (event) => event.path === `${sandbox.workspace}/tree/new/deeper`);
      expect((await sandbox.commands.run("printf y > tree/new/deeper/in-new.txt")).exitCode).toBe(0);
      const seen = await readUntil(iterator, (event) => event.path.endsWith("/in-new.txt"), first);
      const lines = normalised(seen, sandbox.workspace);
      expect(lines).toContain("create tree/old/in-old.txt");
      expect(lines).toContain("create tree/new/");
      expect(lines).toContain("create tree/new/deeper/");
      expect(lines.at(-1)).toBe("create tree/new/deeper/in-new.txt");
      await watcher.stop();
    },
  );

  contractTest(
    "file-watch.confined",
    "a watch is confined like every file call: a link out of the workspace and .. are refused, a missing path is not found, a file is not a directory",
    async () => {
      await using sandbox = await harness.createSandbox();
      expect((await sandbox.commands.run("ln -s /etc out-link && printf x > plain.txt")).exitCode).toBe(0);
      const escaped = await expectSbxError(() => sandbox.files.watch("out-link"), "SBX_PATH");
      expect((escaped as unknown as { reason: string }).reason).toBe("escapes-workspace");
      const dotted = await expectSbxError(() => sandbox.files.watch("../"), "SBX_PATH");
      expect((dotted as unknown as { reason: string }).reason).toBe("escapes-workspace");
      await expectSbxError(() => sandbox.files.watch("missing-folder"), "SBX_FILE_NOT_FOUND");
      const file = await expectSbxError(() => sandbox.files.watch("plain.txt"), "SBX_PATH");
      expect((file as unknown as { reason: string }).reason).toBe("not-a-directory");
    },
  );

  contractTest(
    "file-watch.burst-bounded",
    "a burst past maxBufferedEvents is held to the bound: what is delivered stays in order, and events are dropped only behind an overflow marker saying so",
    async () => {
      await using sandbox = await harness.createSandbox();
      await sandbox.files.mkdir("burst");
      const maxBufferedEvents = 50;
      const { watcher, iterator } = await watching(sandbox, "burst", { maxBufferedEvents });
      // 12 times the bound: enough to overflow it when the backend delivers the burst at once; small enough that a loaded
      // host delivering it slowly (3,000 took most of the 30 s wait on a loaded CI machine) still does within the wait.
      const burst = 600;
      const made = await sandbox.commands.run(`i=0; while [ "$i" -lt ${burst} ]; do : > "burst/f$i"; i=$((i + 1)); done; echo made`);
      expect(made.stdout).toBe("made\n");
      // Read only now. Whether the queue overflowed depends on how fast the backend delivered the burst (a loaded
      // host may deliver it slowly enough for this reader to keep up: then nothing need be dropped). Either way nothing
      // is lost silently: every event arrives, or an overflow marker says events were dropped.
      const lastName = `/f${burst - 1}`;
      const burstEvents = await readUntil(iterator, (event) => event.type === "overflow" || event.path.endsWith(lastName));
      // A later change arrives again once the held events are read. On a loaded host the burst may still be arriving
      // when the first marker is read, so the queue can overflow again and a later change can be dropped behind a
      // second marker (correctly: the marker says so). A change made after a marker was read is then made again, until
      // one arrives: the burst is finite and the reader keeps reading, so it does within a few rounds.
      let events = burstEvents;
      let arrived = false;
      for (let round = 0; round < 5 && !arrived; round++) {
        await sandbox.files.write(`burst/after-burst-${round}.txt`, "later");
        events = await readUntil(iterator, (event) => event.type === "overflow" || event.path.endsWith(`/after-burst-${round}.txt`), events);
        arrived = events.at(-1)!.type !== "overflow";
      }
      expect(arrived, "a change made after the burst arrives once the held events are read").toBe(true);
      const markers = events.filter((event) => event.type === "overflow");
      const created = events
        .filter((event) => event.type === "create" && /\/burst\/f\d+$/.test(event.path))
        .map((event) => Number(event.path.split("/f").pop()));
      expect(
        created.every((index, position) => position === 0 || index > created[position - 1]!),
        "delivered creates are in order",
      ).toBe(true);
      if (markers.length === 0) {
        expect(created, "no marker: every create arrived").toEqual(Array.from({ length: burst }, (_unused, index) => index));
      } else {
        for (const marker of markers) {
          expect(marker.path).toBe(`${sandbox.workspace}/burst`);
          expect(marker.dropped === null || (typeof marker.dropped === "number" && marker.dropped > 0), `dropped: ${String(marker.dropped)}`).toBe(
            true,
          );
        }
        expect(created.length, "fewer creates than the burst were delivered").toBeLessThan(burst);
        // That the queue holds at most maxBufferedEvents unread is core's, proven without timing in watch-event-queue.test.ts.
      }
      await watcher.stop();
    },
  );

  contractTest(
    "file-watch.ends-with-sandbox",
    "an abort ends iteration normally; killing the sandbox ends a running watch with SBX_SANDBOX_CLOSED, never silently",
    async () => {
      const sandbox = await harness.createSandbox();
      try {
        await sandbox.files.mkdir("w");
        const controller = new AbortController();
        const aborted = await watching(sandbox, "w", { signal: controller.signal });
        controller.abort();
        expect((await aborted.iterator.next()).done, "an aborted watch ends").toBe(true);
        const running = await watching(sandbox, "w");
        // The reader waits when the kill comes: its read must end with the error (the check is attached first).
        const ended = expectSbxError(running.iterator.next(), "SBX_SANDBOX_CLOSED");
        await sandbox.kill();
        await ended;
        await expectSbxError(() => sandbox.files.watch("w"), "SBX_SANDBOX_CLOSED");
      } finally {
        await sandbox.kill();
      }
    },
  );
}

/** The file watching group on its own. */
export function describeFileWatchContract(name: string, factory: SandboxProviderFactoryForContract, options?: SandboxContractOptions): void {
  describeGroup("file watching", name, factory, options, registerFileWatchTests);
}
