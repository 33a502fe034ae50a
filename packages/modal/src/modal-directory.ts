import { PolicyNotEnforcedError, SandboxNotFoundError, type ListedSandbox } from "@sbx/core";
import { throwIfAborted, type ResolvedCreateOptions } from "@sbx/core/adapter";
import type { App, ModalClient, Sandbox } from "modal";
import { mapModalError } from "./map-modal-error.js";

/**
 * Tag a named sandbox carries: the policy it was created with (egress, user, CPU and memory limits), so a caller that
 * attaches to it by name is refused when it asks for another (Modal's SDK cannot read a sandbox's policy back). Not one
 * of the sandbox's labels. Only holders of the Modal token can change tags, never the sandbox itself.
 */
export const MODAL_POLICY_TAG = "sbx.policy";

/** More than core accepts from one listing (10 000): paging stops here and core refuses the answer rather than cut it. */
const LONGEST_LISTING = 10_001;
/** How long `getOrCreate` waits for a sandbox of the name that another caller is still starting. */
const NAMED_WAIT_MS = 60_000;
/** Pause between looks while it waits. */
const NAMED_POLL_MS = 200;

/** The policy a named sandbox records in its `sbx.policy` tag. */
export function policyTagOf(options: ResolvedCreateOptions): string {
  return JSON.stringify({ egress: options.network.egress, user: options.user, cpus: options.limits?.cpus, memoryMiB: options.limits?.memoryMiB });
}

/**
 * The running sandboxes of sbx's Modal app carrying every one of `labels` as tags (`LIST_SANDBOXES`, ADR 0057): Modal's
 * own tag filter (`SandboxListV2 {app_id, tags}`, what the SDK's `sandboxes.list({ appId, tags })` sends), every page
 * with the SDK's paging (`before_timestamp` = the last entry's creation time). The SDK's `list` yields handles without
 * the creation time and name the answer carries, so the same call is made through the SDK's own `cpClient`.
 */
export async function listModalSandboxes(
  modal: ModalClient,
  app: App,
  request: { labels: Readonly<Record<string, string>>; signal?: AbortSignal },
): Promise<ListedSandbox[]> {
  const tags = Object.entries(request.labels).map(([tagName, tagValue]) => ({ tagName, tagValue }));
  const listed: ListedSandbox[] = [];
  let beforeTimestamp: number | undefined;
  try {
    while (listed.length < LONGEST_LISTING) {
      throwIfAborted(request.signal, "modal");
      const answer = await modal.cpClient.sandboxListV2(
        { appId: app.appId, beforeTimestamp, includeFinished: false, tags },
        { signal: request.signal },
      );
      if (answer.sandboxes.length === 0) break;
      for (const info of answer.sandboxes) {
        const labels: Record<string, string> = {};
        for (const tag of info.tags) if (tag.tagName !== MODAL_POLICY_TAG) labels[tag.tagName] = tag.tagValue;
        listed.push({ id: info.id, labels, createdAt: new Date(info.createdAt * 1000).toISOString(), state: "running", name: info.name || null });
      }
      const oldest = answer.sandboxes[answer.sandboxes.length - 1]!.createdAt;
      // Strictly older than the last page's oldest, or paging would never end.
      if (beforeTimestamp !== undefined && oldest >= beforeTimestamp) break;
      beforeTimestamp = oldest;
    }
  } catch (error) {
    throw mapModalError(error, { operation: "list sandboxes" });
  }
  return listed;
}

/** True for Modal's answer that a running sandbox of that name exists in the app (ALREADY_EXISTS), however it was wrapped. */
export function isNameTaken(error: unknown): boolean {
  for (let current = error, depth = 0; current && depth < 4; current = (current as { cause?: unknown }).cause, depth++) {
    if ((current as { name?: unknown }).name === "AlreadyExistsError") return true;
    if ((current as { code?: unknown }).code === 6 && /already exists/i.test(String((current as { message?: unknown }).message))) return true;
  }
  return false;
}

/** What `getOrCreateNamedModal` uses of the provider. */
export interface NamedModalOperations<Driver> {
  readonly modal: ModalClient;
  readonly appName: string;
  readonly environment: string | undefined;
  /** Creates the sandbox with this name (and its policy tag); rejects with Modal's ALREADY_EXISTS when the name is taken. */
  create(): Promise<Driver>;
  /** Attaches to the running sandbox of this id. */
  connect(sandboxId: string): Promise<Driver>;
}

/**
 * Get-or-create by name on Modal (`NAMED_SANDBOXES`, ADR 0057): create the sandbox named `name` in sbx's app; when
 * Modal answers that a running sandbox of that name exists (its own uniqueness: ALREADY_EXISTS, never a look first),
 * attach to it (`sandboxes.fromName`) after checking its recorded policy against this caller's. Waits at most 60 s
 * for one another caller is still starting.
 */
export async function getOrCreateNamedModal<Driver>(
  operations: NamedModalOperations<Driver>,
  request: { name: string; options: ResolvedCreateOptions; signal?: AbortSignal },
): Promise<{ driver: Driver; created: boolean }> {
  const giveUpAt = Date.now() + NAMED_WAIT_MS;
  for (;;) {
    throwIfAborted(request.signal, "modal");
    try {
      return { driver: await operations.create(), created: true };
    } catch (error) {
      if (!isNameTaken(error)) throw error;
    }
    let existing: Sandbox | undefined;
    try {
      existing = await operations.modal.sandboxes.fromName(
        operations.appName,
        request.name,
        operations.environment ? { environment: operations.environment } : {},
      );
    } catch (error) {
      // Not running yet (another caller's create is still starting it) or already finished: look again.
      if ((error as { name?: unknown }).name !== "NotFoundError") throw mapModalError(error, { operation: "find a named sandbox" });
    }
    if (existing) {
      const tags = await existing.getTags().catch((error: unknown) => {
        throw mapModalError(error, { operation: "read a named sandbox's tags", sandboxId: existing!.sandboxId });
      });
      refuseOtherPolicy(request.name, request.options, tags[MODAL_POLICY_TAG]);
      return { driver: await operations.connect(existing.sandboxId), created: false };
    }
    if (Date.now() > giveUpAt)
      throw new SandboxNotFoundError({
        backend: "modal",
        sandboxId: request.name,
        message: `The Modal sandbox named ${JSON.stringify(request.name)} exists but was not running within ${NAMED_WAIT_MS} ms.`,
      });
    await new Promise((resolve) => setTimeout(resolve, NAMED_POLL_MS));
  }
}

/** Refuses attaching to a named sandbox whose recorded policy differs from what this caller asks for. */
function refuseOtherPolicy(name: string, options: ResolvedCreateOptions, tagText: string | undefined): void {
  let recorded: Record<string, unknown> = {};
  try {
    const parsed: unknown = tagText === undefined ? undefined : JSON.parse(tagText);
    if (typeof parsed === "object" && parsed !== null) recorded = parsed as Record<string, unknown>;
  } catch {
    // An unreadable record matches nothing below.
  }
  const differences: string[] = [];
  if (recorded.egress !== options.network.egress) differences.push(`egress ${String(recorded.egress)} (asked: ${options.network.egress})`);
  if (recorded.user !== options.user) differences.push(`user ${String(recorded.user)} (asked: ${options.user})`);
  for (const limit of ["cpus", "memoryMiB"] as const) {
    const asked = options.limits?.[limit];
    if (asked !== undefined && recorded[limit] !== asked) differences.push(`${limit} ${String(recorded[limit])} (asked: ${asked})`);
  }
  if ((options.network.allow ?? []).length > 0) differences.push("an egress allowlist (attaching to a named sandbox's allowlist is not supported)");
  if (differences.length > 0)
    throw new PolicyNotEnforcedError({
      backend: "modal",
      policy: "named-sandbox",
      message: `The Modal sandbox named ${JSON.stringify(name)} exists with another policy: ${differences.join("; ")}. Refusing to hand it out as if it had yours.`,
    });
}
