/**
 * `?watch=true` on a list path, as the API server serves it: HTTP 200 with one JSON event per line
 * (`{"type":"ADDED"|"MODIFIED"|"DELETED","object":…}`), client-node's `Watch` reads them line by line. Without a
 * `resourceVersion` (or `"0"`) the current objects come first as `ADDED`; with one, the kept changes after it. A
 * version older than the store keeps gets one `ERROR` event carrying a `410` `Status` with reason `Expired` ("too old
 * resource version"), then the stream ends, as kube-apiserver does after a compaction. `timeoutSeconds` ends the stream.
 */
import type { ServerResponse } from "node:http";
import { failureStatus } from "./api-status.js";
import { matchesLabels, type parseLabelSelector } from "./label-selector.js";
import type { ObjectStore, StoredObject, WatchEvent } from "./object-store.js";

/** What one watch request asks. */
export interface WatchRequest {
  readonly namespace: string;
  readonly requirements: ReturnType<typeof parseLabelSelector>;
  /** The `resourceVersion` parameter, or null. */
  readonly resourceVersion: string | null;
  /** `timeoutSeconds`, or null. */
  readonly timeoutSeconds: string | null;
  /** Answer 410 Expired whatever the version (the emulator's forced expiry). */
  readonly forceExpired: boolean;
}

/** The `ERROR` event of an expired watch. */
export function expiredEvent(asked: string, oldestKept: string) {
  return {
    type: "ERROR",
    object: failureStatus({ code: 410, reason: "Expired", message: `too old resource version: ${asked} (${oldestKept})` }),
  };
}

/** Serves one watch on `response`; returns when the stream is set up. */
export function serveWatch<Stored extends StoredObject>(response: ServerResponse, store: ObjectStore<Stored>, request: WatchRequest): void {
  response.writeHead(200, { "content-type": "application/json", "cache-control": "no-cache, private", "transfer-encoding": "chunked" });
  const send = (event: unknown) => {
    if (!response.writableEnded) response.write(`${JSON.stringify(event)}\n`);
  };
  const selected = (object: StoredObject) =>
    object.metadata.namespace === request.namespace && matchesLabels(request.requirements, object.metadata.labels);
  const asked = request.resourceVersion;
  const fromNow = asked === null || asked === "" || asked === "0";
  const version = fromNow ? Number.MAX_SAFE_INTEGER : Number(asked);
  if (!fromNow && !Number.isSafeInteger(version)) {
    send({ type: "ERROR", object: failureStatus({ code: 400, reason: "BadRequest", message: `invalid resource version: ${asked}` }) });
    response.end();
    return;
  }
  // Everything below runs in one turn of the event loop: no change can fall between the replay and the live events.
  const forward = (event: WatchEvent<Stored>) => {
    if (selected(event.object)) send(event);
  };
  const start = request.forceExpired ? ({ expired: true, oldestKept: asked ?? "0" } as const) : store.watch(version, forward);
  if (start.expired) {
    send(expiredEvent(asked ?? "0", start.oldestKept));
    response.end();
    return;
  }
  if (fromNow) {
    for (const object of store.list(request.namespace)) if (selected(object)) send({ type: "ADDED", object });
  } else {
    for (const event of start.replay) forward(event);
  }
  const timeout = request.timeoutSeconds === null ? undefined : Number(request.timeoutSeconds);
  const timer = timeout !== undefined && Number.isFinite(timeout) && timeout > 0 ? setTimeout(() => response.end(), timeout * 1000) : undefined;
  timer?.unref();
  response.on("close", () => {
    start.stop();
    if (timer) clearTimeout(timer);
  });
}
