import { z } from "zod";
import { CapabilityNotSupportedError, InvalidArgumentError, ProviderError } from "../errors/index.js";
import { createSandboxFromDriver } from "../sandbox/create-sandbox-from-driver.js";
import { callAdapter, throwIfAborted } from "../security/guard.js";
import { validate } from "../security/validate.js";
import { createSandboxOptionsSchema, type CreateSandboxOptions } from "../v1/options.js";
import { listedSandboxSchema, sandboxNameSchema, type ListedSandbox } from "../v1/listing.js";
import type { SandboxProviderV1 } from "../v1/provider.js";
import type { Sandbox } from "../v1/sandbox.js";
import { backendsSupporting } from "./backend-registry.js";
import { loggedCall } from "./backend-logging.js";
import { refuseCapabilityMethodMismatch } from "./capability-method-check.js";
import { checkProvider, loadProvider, parseOptions, parseTarget, refuseUnsupportedPolicies, wrapOrDestroy } from "./resolve-backend.js";
import { resolveProvider } from "./resolve-provider.js";
import { refuseUnknownSettings } from "./unknown-settings.js";

const signalSchema = z.custom<AbortSignal>((value) => value === undefined || value instanceof AbortSignal, "must be an AbortSignal");

/** Options of `listSandboxes()`. */
export const listSandboxesOptionsSchema = z
  .object({
    labels: createSandboxOptionsSchema.shape.metadata.optional(),
    settings: z.record(z.string(), z.unknown()).optional(),
    signal: signalSchema.optional(),
  })
  .strict();

/** Options of `listSandboxes()`. */
export interface ListSandboxesOptions {
  /** Only sandboxes carrying every one of these labels (the `metadata` given at create). Default: every sbx sandbox. */
  labels?: Record<string, string>;
  /** Backend settings for loading the adapter (for example the Docker engine's `socketPath`). Default none. */
  settings?: Record<string, unknown>;
  /** Aborts the listing. */
  signal?: AbortSignal;
}

/** The most sandboxes one listing returns; a backend answering more is refused rather than cut silently. */
const LONGEST_LISTING = 10_000;

/**
 * Lists the backend's live sbx sandboxes carrying every one of `labels` (given at create as `metadata`), each with its
 * id, labels, created time, state and name (ADR 0050). Needs `LIST_SANDBOXES`; refused with
 * `CapabilityNotSupportedError` naming the backends that have it. `target` names the backend: `"docker://"`, or a
 * provider object. Oldest first.
 */
export async function listSandboxes(target: string | SandboxProviderV1, options: ListSandboxesOptions = {}): Promise<ListedSandbox[]> {
  const { labels = {}, settings = {}, signal } = validate(listSandboxesOptionsSchema, options, "options");
  throwIfAborted(signal);
  const provider = typeof target === "string" ? await loadProvider(parseTarget(target).scheme, settings) : checkProvider(target);
  refuseUnknownSettings(provider, settings);
  if (!provider.capabilities.LIST_SANDBOXES || !provider.list)
    throw new CapabilityNotSupportedError({
      capability: "LIST_SANDBOXES",
      backend: provider.backend,
      supportedBy: backendsSupporting("LIST_SANDBOXES", provider.backend),
    });
  const list = provider.list.bind(provider);
  const listed = await callAdapter(provider.backend, "list sandboxes", [], () => list({ labels, signal }));
  const parsed = z.array(listedSandboxSchema).max(LONGEST_LISTING).safeParse(listed);
  if (!parsed.success)
    throw new ProviderError({
      backend: provider.backend,
      message: `The ${provider.backend} backend answered the listing with something that is not a list of sandboxes (at most ${LONGEST_LISTING}): ${parsed.error.issues[0]?.message ?? "invalid"}.`,
    });
  return parsed.data
    .filter((entry) => Object.entries(labels).every(([key, value]) => entry.labels[key] === value))
    .sort((left, right) => Date.parse(left.createdAt) - Date.parse(right.createdAt));
}

/** What `getOrCreateSandbox()` returns. */
export interface GetOrCreateSandboxResult {
  /** The sandbox of that name. */
  readonly sandbox: Sandbox;
  /** True when this call created it; false when it attached to the live one (created by any process). */
  readonly created: boolean;
}

/**
 * The sandbox named `name`: created with `options` when no live sandbox has that name, else the live one attached
 * (its policies read back and recorded, never the caller's assumed). Exactly one caller creates when several race,
 * in one process or many (the backend's own name uniqueness, ADR 0050). Needs `NAMED_SANDBOXES`; refused with
 * `CapabilityNotSupportedError` naming the backends that have it. `credential()` sources are refused (an attached
 * sandbox's credentials belong to its creator); plain `secrets` apply to this object's commands.
 */
export async function getOrCreateSandbox(
  target: string | SandboxProviderV1,
  options: CreateSandboxOptions & { name: string },
): Promise<GetOrCreateSandboxResult> {
  if (typeof options !== "object" || options === null)
    throw new InvalidArgumentError({ field: "options", message: "Invalid options: expected an object with a name." });
  const { name: givenName, ...createOptions } = options;
  const name = validate(sandboxNameSchema, givenName, "options.name");
  const { resolved, signal, credentials, backends, logger } = parseOptions(createOptions);
  if (credentials.size > 0)
    throw new InvalidArgumentError({
      field: `options.secrets.${[...credentials.keys()][0]}`,
      message:
        "Invalid options.secrets: credential() sources are issued for a sandbox this call creates, and getOrCreateSandbox() may attach to one another process created. Pass the value as a plain secret, or use createSandbox().",
    });
  throwIfAborted(signal);
  const { provider, providerTarget } = await resolveProvider(target, resolved, backends, signal);
  refuseUnknownSettings(provider, resolved.settings);
  if (!provider.capabilities.NAMED_SANDBOXES || !provider.getOrCreate)
    throw new CapabilityNotSupportedError({
      capability: "NAMED_SANDBOXES",
      backend: provider.backend,
      supportedBy: backendsSupporting("NAMED_SANDBOXES", provider.backend),
    });
  refuseUnsupportedPolicies(provider, resolved);
  const getOrCreate = provider.getOrCreate.bind(provider);
  const secrets = Object.values(resolved.secrets);
  const { driver, created } = await callAdapter(provider.backend, "get or create a named sandbox", secrets, () =>
    loggedCall(logger, secrets, { backend: provider.backend, operation: "getOrCreate", detail: name }, () =>
      getOrCreate({ target: providerTarget, options: resolved, signal, name }),
    ),
  );
  const check = () =>
    refuseCapabilityMethodMismatch({ holder: "driver", target: driver, capabilities: provider.capabilities, backend: provider.backend });
  // A sandbox this call created is destroyed when refused; an attached one is not ours to destroy.
  if (created) await wrapOrDestroy(driver, check);
  else check();
  const context = { provider, target: providerTarget, options: resolved, logger, reconnected: !created };
  const sandbox = created ? await wrapOrDestroy(driver, () => createSandboxFromDriver(driver, context)) : createSandboxFromDriver(driver, context);
  return { sandbox, created };
}
