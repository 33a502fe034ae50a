import { Sandbox as CodeInterpreterSandbox } from "@e2b/code-interpreter";
import type { ListedSandbox } from "@sbx/core";
import { throwIfAborted } from "@sbx/core/adapter";
import { mapE2BError } from "./map-e2b-error.js";

/**
 * Metadata key E2B sandboxes made by sbx carry (value `"1"`), so a listing returns sbx's sandboxes only, as Docker's
 * `sbx.managed` label does; it is not one of the sandbox's labels.
 */
export const E2B_MANAGED_METADATA_KEY = "sbx.managed";

/** More than core accepts from one listing (10 000): paging stops here and core refuses the answer rather than cut it. */
const LONGEST_LISTING = 10_001;

/** What `listE2BSandboxes` needs of the provider's connection settings. */
type ConnectionOptions = Parameters<typeof CodeInterpreterSandbox.list>[0];

/**
 * Lists the account's running and paused sbx sandboxes carrying every one of `labels` (`LIST_SANDBOXES`, ADR 0057):
 * E2B's own metadata filter (`Sandbox.list({ query: { metadata } })`), every page. Each entry's labels are its
 * metadata without sbx's marker; its created time is E2B's `startedAt`; E2B has no sandbox names (`name` is null:
 * E2B's `name` is the template's).
 */
export async function listE2BSandboxes(
  connection: ConnectionOptions,
  request: { labels: Readonly<Record<string, string>>; signal?: AbortSignal },
): Promise<ListedSandbox[]> {
  throwIfAborted(request.signal, "e2b");
  const listed: ListedSandbox[] = [];
  try {
    const paginator = CodeInterpreterSandbox.list({
      ...connection,
      query: { metadata: { ...request.labels, [E2B_MANAGED_METADATA_KEY]: "1" }, state: ["running", "paused"] },
    });
    while (paginator.hasNext && listed.length < LONGEST_LISTING) {
      for (const info of await paginator.nextItems({ signal: request.signal })) {
        const labels = { ...info.metadata };
        delete labels[E2B_MANAGED_METADATA_KEY];
        listed.push({
          id: info.sandboxId,
          labels,
          createdAt: info.startedAt.toISOString(),
          state: info.state === "paused" ? "paused" : "running",
          name: null,
        });
      }
    }
  } catch (error) {
    throw mapE2BError(error, { operation: "list sandboxes" });
  }
  return listed;
}
