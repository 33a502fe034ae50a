import { FileNotFoundError, PathError, ProviderError } from "../errors/index.js";
import type { DriverFileWatch, WatchFilesRequest } from "../v1/provider.js";
import type { FileWatchEvent } from "../v1/sandbox.js";
import type { AgentFrame } from "./agent-frames.js";
import type { AgentSession } from "./agent-session.js";

/** Longest part of the agent's message kept in an error (the agent is sandbox code). */
const MESSAGE_CHARACTERS = 2000;

/** Whether `path` is a plain relative path below the watched directory (no `..`, no empty or absolute part, no NUL). */
function isRelativeBelow(path: unknown): path is string {
  if (typeof path !== "string" || path === "" || path.includes("\0")) return false;
  return path.split("/").every((part) => part !== "" && part !== "." && part !== "..");
}

/** The event types the agent sends, by their short names. */
const EVENT_TYPES = new Set(["create", "write", "remove", "rename", "overflow"]);

/**
 * Watches a directory through the sbx agent (ADR 0049): `watch` with the workspace and the path inside it (the agent
 * walks it without following links out, and watches with inotify), `watch_events` frames whose body is a JSON array of
 * events, `watch_end` when the watched directory went away, `unwatch` to stop. Everything from the agent is checked:
 * an event that is not well formed, or names a path outside the watched directory, is dropped and counted as an
 * overflow (never believed, never thrown).
 */
export function watchThroughAgent(session: AgentSession, workspace: string, request: WatchFilesRequest, backend: string): Promise<DriverFileWatch> {
  const relative = request.path === workspace ? "" : request.path.slice(workspace.length + 1);
  const absolute = (path: string) => (path === "" ? request.path : `${request.path}/${path}`);
  let stopped = false;
  let ended = false;
  const end = (error: Error) => {
    if (stopped || ended) return;
    ended = true;
    request.onEnd(error);
  };
  const refusal = (header: AgentFrame["header"]): Error => {
    const message = typeof header.message === "string" ? header.message.slice(0, MESSAGE_CHARACTERS) : "no message";
    switch (header.code) {
      case "not-found":
        return new FileNotFoundError({ path: request.path, backend, message: `Cannot watch ${request.path}: ${message}.` });
      case "not-a-directory":
      case "escapes-workspace":
        return new PathError({
          path: request.path,
          reason: header.code,
          backend,
          message: `Refused to watch ${JSON.stringify(request.path)}: ${message}.`,
        });
      default:
        return new ProviderError({ backend, message: `The sbx sandbox agent could not watch ${request.path} (${String(header.code)}): ${message}` });
    }
  };
  const deliver = (body: Uint8Array) => {
    let events: unknown;
    try {
      events = JSON.parse(Buffer.from(body).toString("ascii"));
    } catch {
      events = null;
    }
    if (!Array.isArray(events)) return request.onEvent({ type: "overflow", path: request.path, isDirectory: false, dropped: null });
    for (const raw of events as unknown[]) request.onEvent(toEvent(raw));
  };
  const toEvent = (raw: unknown): FileWatchEvent => {
    const item = (typeof raw === "object" && raw !== null ? raw : {}) as Record<string, unknown>;
    const type = item.t;
    if (typeof type !== "string" || !EVENT_TYPES.has(type) || type === "overflow")
      return { type: "overflow", path: request.path, isDirectory: false, dropped: null };
    // A path that is not plain and below the watched directory is not believed: it is counted as a lost event.
    if (!isRelativeBelow(item.p) || (type === "rename" && !isRelativeBelow(item.f)))
      return { type: "overflow", path: request.path, isDirectory: false, dropped: null };
    const base = { type: type as FileWatchEvent["type"], path: absolute(item.p), isDirectory: item.d === true };
    return type === "rename" ? { ...base, from: absolute(item.f as string) } : base;
  };
  return new Promise<DriverFileWatch>((resolve, reject) => {
    let watching = false;
    let id = 0;
    const onFrame = ({ header, body }: AgentFrame) => {
      try {
        if (header.type === "watching") {
          watching = true;
          resolve({
            stop: async () => {
              if (stopped) return;
              stopped = true;
              session.settle(id);
              session.notify({ type: "unwatch", target: id });
            },
          });
        } else if (header.type === "watch_events") {
          if (!stopped) deliver(body);
        } else if (header.type === "watch_end") {
          session.settle(id);
          end(refusal(header));
        } else if (header.type === "error") {
          session.settle(id);
          if (watching) end(refusal(header));
          else reject(refusal(header));
        }
      } catch {
        // A listener defect must not throw into the agent's stream.
      }
    };
    const fail = (error: Error) => {
      if (watching) end(error);
      else reject(error);
    };
    id = session.request(null, { type: "watch", root: workspace, path: relative, recursive: request.recursive }, { onFrame, fail });
    const onAbort = () => {
      if (watching) return;
      session.settle(id);
      session.notify({ type: "unwatch", target: id });
      reject(request.signal.reason instanceof Error ? request.signal.reason : new Error("aborted"));
    };
    if (request.signal.aborted) onAbort();
    else request.signal.addEventListener("abort", onAbort, { once: true });
  });
}
