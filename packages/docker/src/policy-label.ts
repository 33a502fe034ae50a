import { ProviderError } from "@sbx/core";
import { z } from "zod";

/**
 * The requested policy a container carries in its `sbx.policy` label (JSON): written at create, read back by `connect`
 * (`policyFromContainer` in policy-readback.ts). One schema for both, so what is written is what can be read.
 */
export const policyLabelSchema = z.object({
  /** `"deny"` (network mode none) or `"allow"`. */
  egress: z.enum(["deny", "allow"]),
  /** CPU limit. */
  cpus: z.number(),
  /** Memory limit in MiB (no swap). */
  memoryMiB: z.number(),
  /** Process limit. */
  pids: z.number(),
  /** What the caller asked for: the default unprivileged user or root. */
  user: z.enum(["default", "root"]),
  /** The `uid:gid` commands run as. */
  commandUser: z.string(),
  /** The lifetime the sandbox was created with, in seconds. */
  lifetimeSeconds: z.number(),
  /** The OCI runtime named in the settings, or null for the engine's default. */
  runtime: z.string().nullable(),
  /** Size of the workspace volume in MiB. */
  workspaceSizeMiB: z.number(),
  /** Size of the /tmp tmpfs in MiB. */
  tmpSizeMiB: z.number(),
  /** True: the sandbox ends when its creating host process exits (dead-man's switch). */
  endsWithHost: z.boolean(),
});

/** The policy label as written (every field). */
export type PolicyLabel = z.output<typeof policyLabelSchema>;

/** The policy label as read back: a container created by an older sbx may lack fields, which then take the settings' defaults. */
const recordedPolicyLabelSchema = policyLabelSchema.partial();

/** The label's value for a new container. */
export function policyLabelValue(label: PolicyLabel): string {
  return JSON.stringify(policyLabelSchema.parse(label));
}

/** Reads a container's policy label (`text`; absent: every field unknown); a label that is not one sbx wrote is a `ProviderError`. */
export function readPolicyLabel(text: string | undefined): Partial<PolicyLabel> {
  if (text === undefined) return {};
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw unreadable(`it is not JSON (${error instanceof Error ? error.message : String(error)})`);
  }
  const parsed = recordedPolicyLabelSchema.safeParse(json);
  if (!parsed.success) throw unreadable(parsed.error.issues.map((issue) => `${issue.path.join(".") || "label"}: ${issue.message}`).join("; "));
  return parsed.data;
}

function unreadable(detail: string): ProviderError {
  return new ProviderError({
    backend: "docker",
    retryable: false,
    message: `The container's policy label is not one sbx wrote (${detail}), so the policy it runs with cannot be read back; refusing to attach.`,
  });
}
