/**
 * envd's `filesystem.Filesystem/WatchDir` (the SDK's `files.watchDir`): a server stream whose first frame is `start`
 * once the watch is in place, then one `filesystem` frame per operation (`{name, type, entry?}`, `name` relative to the
 * watched directory) and `keepalive` frames. Backed by real inotify inside the sandbox container (`envd-watch-script.ts`,
 * one `docker exec` per watch, as root like envd). What envd answers is kept: a missing path is `not_found`, a file
 * `invalid_argument`, the kernel's queue overflowing ends the stream with `internal` (envd's fsnotify reports it as an
 * error). A reader that does not keep up holds the helper back (its output pauses, the kernel's queue fills and
 * overflows): nothing grows without bound here.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { startExec } from "@sbx/emulator-kit";
import type { ContainerSandbox } from "./container-sandbox.js";
import { ConnectProtocolError, ServerStream, readRequestMessage, type ConnectErrorCode } from "./connect-protocol.js";
import { userFromRequest } from "./envd-authentication.js";
import { WATCH_SCRIPT } from "./envd-watch-script.js";
import { resolveSandboxPath } from "./envd-filesystem.js";
import { LineSplitter } from "./line-splitter.js";

/** envd's `EventType` enum names, by the helper's operation names. */
const EVENT_TYPES: Record<string, string> = {
  create: "EVENT_TYPE_CREATE",
  write: "EVENT_TYPE_WRITE",
  remove: "EVENT_TYPE_REMOVE",
  rename: "EVENT_TYPE_RENAME",
  chmod: "EVENT_TYPE_CHMOD",
};

/** One line of the helper. */
interface HelperLine {
  ready?: boolean;
  overflow?: boolean;
  error?: ConnectErrorCode;
  message?: string;
  name?: string;
  op?: string;
  entry?: { name: string; type: number; path: string; size: string; mode: number; permissions: string; owner: string; group: string; mtime: number };
}

function keepaliveSeconds(request: IncomingMessage): number {
  const value = Number(request.headers["keepalive-ping-interval"]);
  return Number.isFinite(value) && value > 0 ? value : 0;
}

/** Handles `WatchDir`: resolves once the stream ended (or the watch could not be placed, by throwing a Connect error). */
export async function handleWatchDir(sandbox: ContainerSandbox, request: IncomingMessage, response: ServerResponse): Promise<void> {
  const user = userFromRequest(request);
  const message = await readRequestMessage<{ path?: string; recursive?: boolean; includeEntry?: boolean }>(request);
  const path = resolveSandboxPath(message.path, user);
  const splitter = new LineSplitter();
  let stream: ServerStream | undefined;
  let settle!: (error?: Error) => void;
  const placed = new Promise<void>((resolve, reject) => {
    settle = (error) => (error ? reject(error) : resolve());
  });
  let waitingForDrain = false;
  const onLine = (line: string) => {
    const parsed = JSON.parse(line) as HelperLine;
    if (!stream) {
      if (parsed.ready) {
        stream = new ServerStream(response, { keepalive: {} }, keepaliveSeconds(request));
        stream.send({ start: {} });
        stream.onClose(() => running.detach());
        settle();
      } else {
        settle(new ConnectProtocolError(parsed.error ?? "internal", parsed.message ?? "the watch could not be placed"));
      }
      return;
    }
    if (parsed.overflow) {
      stream.end({ code: "internal", message: "watcher error: fsnotify: queue or buffer overflow" });
      running.detach();
      return;
    }
    const type = EVENT_TYPES[parsed.op ?? ""];
    if (!type || parsed.name === undefined) return;
    const entry = parsed.entry
      ? { ...parsed.entry, mtime: undefined, modifiedTime: new Date(Math.floor(parsed.entry.mtime * 1000)).toISOString() }
      : undefined;
    const writable = stream.send({ filesystem: { name: parsed.name, type, ...(entry ? { entry } : {}) } });
    if (!writable && !waitingForDrain) {
      waitingForDrain = true;
      running.pause();
      void stream.waitForDrain().then(() => {
        waitingForDrain = false;
        running.resume();
      });
    }
  };
  const running = await startExec(
    sandbox.container,
    {
      command: ["python3", "-c", WATCH_SCRIPT, path, message.recursive ? "1" : "0", message.includeEntry ? "1" : "0"],
      user: "root",
      workingDirectory: "/",
      attachStdin: true,
    },
    {
      onStdout: (chunk) => {
        for (const line of splitter.push(chunk)) if (line) onLine(line);
      },
      onStderr: () => undefined,
    },
  );
  void running.outputEnded.then(() => {
    if (!stream) settle(new ConnectProtocolError("internal", "the watcher ended before the watch was placed"));
    else if (!stream.closed) stream.end({ code: "internal", message: "watcher event channel closed" });
  });
  response.on("close", () => running.detach());
  await placed;
}
