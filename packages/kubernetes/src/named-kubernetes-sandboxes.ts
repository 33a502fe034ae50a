/**
 * Get-or-create by name (ADR 0050, ADR 0058). Every caller first creates the NetworkPolicy `sbx-<digest of name>` (a
 * deny-all, or an ingress-only claim when egress is allowed); the API server lets exactly one create it, the others get
 * `409 AlreadyExists`. The creator goes on as any create (Pod after policy, the egress probe); the others attach
 * (`connect`) once the Pod runs, after checking the name and the policy recorded on the Pod match theirs.
 */
import type { V1Pod } from "@kubernetes/client-node";
import { InvalidArgumentError, PolicyNotEnforcedError, SandboxNotFoundError, SbxError } from "@sbx/core";
import { throwIfAborted, type SandboxDriverV1 } from "@sbx/core/adapter";
import { MANAGED_LABEL, NAME_ANNOTATION, namedSandboxIdOf, objectNameOf, POLICY_ANNOTATION, type RecordedPolicy } from "./kubernetes-manifests.js";
import { mapKubernetesError, statusCodeOf } from "./map-kubernetes-error.js";

/** How long a caller that lost the claim waits for the sandbox to run (or to be gone, to claim again), in ms. */
const NAMED_WAIT_MS = 60_000;
/** Pause between looks while it waits, in ms. */
const NAMED_POLL_MS = 250;

/** Thrown by the create when the name's NetworkPolicy already exists (409): another caller holds the claim. Internal. */
export class NameTakenSignal extends Error {
  constructor(readonly sandboxName: string) {
    super(`the name ${JSON.stringify(sandboxName)} is claimed by another caller`);
  }
}

/** What `getOrCreateNamed` uses of the provider. */
export interface NamedOperations {
  /** The provider's create with the objects named after the name (throws `NameTakenSignal` on the claim's 409). */
  create(): Promise<SandboxDriverV1>;
  /** The provider's connect. */
  connect(sandboxId: string): Promise<SandboxDriverV1>;
  /** Reads a Pod by name (rejects with the API's error). */
  readPod(podName: string): Promise<V1Pod>;
  readonly namespace: string;
  readonly name: string;
  /** The policy this caller asks for, as a named sandbox records it. */
  readonly recorded: RecordedPolicy;
  readonly signal?: AbortSignal;
}

/** The differences between the policy recorded on a named sandbox and the one asked for (the limits only when asked). */
export function policyDifferences(recorded: unknown, asked: RecordedPolicy, limitsAsked: { cpus: boolean; memoryMiB: boolean }): string[] {
  const record = (typeof recorded === "object" && recorded !== null ? recorded : {}) as Partial<Record<keyof RecordedPolicy, unknown>>;
  const differences: string[] = [];
  if (record.egress !== asked.egress) differences.push(`egress ${String(record.egress)} (asked: ${asked.egress})`);
  if (record.user !== asked.user) differences.push(`user ${String(record.user)} (asked: ${asked.user})`);
  if (limitsAsked.cpus && record.cpus !== asked.cpus) differences.push(`cpus ${String(record.cpus)} (asked: ${asked.cpus})`);
  if (limitsAsked.memoryMiB && record.memoryMiB !== asked.memoryMiB)
    differences.push(`memoryMiB ${String(record.memoryMiB)} (asked: ${asked.memoryMiB})`);
  return differences;
}

function parsedOrUndefined(text: string | undefined): unknown {
  try {
    return JSON.parse(text ?? "");
  } catch {
    return undefined;
  }
}

/**
 * Creates the sandbox named `name`, or attaches to the one another caller created (in this process or another). Never
 * check-then-create: the claim is the create itself. Waits at most 60 s for a sandbox another caller is still starting.
 * `limitsAsked` says which limits this caller gave (only those must match the recorded ones, as on Docker).
 */
export async function getOrCreateNamed(
  operations: NamedOperations & { limitsAsked: { cpus: boolean; memoryMiB: boolean } },
): Promise<{ driver: SandboxDriverV1; created: boolean }> {
  const sandboxId = namedSandboxIdOf(operations.name);
  const podName = objectNameOf(sandboxId);
  const giveUpAt = Date.now() + NAMED_WAIT_MS;
  let lastSeen = "its Pod did not appear";
  for (;;) {
    throwIfAborted(operations.signal, "k8s");
    try {
      return { driver: await operations.create(), created: true };
    } catch (error) {
      if (!(error instanceof NameTakenSignal)) throw error;
    }
    let pod: V1Pod | undefined;
    try {
      pod = await operations.readPod(podName);
    } catch (error) {
      if (statusCodeOf(error) !== 404) throw mapKubernetesError(error, { operation: "read the named sandbox's Pod" });
    }
    if (pod) {
      const recordedName = pod.metadata?.annotations?.[NAME_ANNOTATION];
      if (pod.metadata?.labels?.[MANAGED_LABEL] !== "true" || recordedName !== operations.name)
        throw new InvalidArgumentError({
          field: "options.name",
          backend: "k8s",
          message: `Invalid options.name: the Pod ${podName} in namespace ${operations.namespace} is not sbx's sandbox named ${JSON.stringify(operations.name)} (${recordedName === undefined ? "no name recorded" : `it records the name ${JSON.stringify(recordedName)}`}); choose another name.`,
        });
      const differences = policyDifferences(
        parsedOrUndefined(pod.metadata?.annotations?.[POLICY_ANNOTATION]),
        operations.recorded,
        operations.limitsAsked,
      );
      if (differences.length > 0)
        throw new PolicyNotEnforcedError({
          backend: "k8s",
          policy: "named-sandbox",
          message: `The Kubernetes sandbox named ${JSON.stringify(operations.name)} exists with another policy: ${differences.join("; ")}. Refusing to hand it out as if it had yours.`,
        });
      const phase = pod.status?.phase ?? "no phase";
      lastSeen = pod.metadata?.deletionTimestamp ? "its Pod is being deleted" : `its Pod is ${phase}`;
      if (phase === "Running" && !pod.metadata?.deletionTimestamp) {
        try {
          return { driver: await operations.connect(sandboxId), created: false };
        } catch (error) {
          if (!(SbxError.isInstance(error) && error.code === "SBX_SANDBOX_NOT_FOUND")) throw error;
        }
      }
    }
    if (Date.now() > giveUpAt)
      throw new SandboxNotFoundError({
        backend: "k8s",
        sandboxId,
        message: `The Kubernetes sandbox named ${JSON.stringify(operations.name)} is claimed (its NetworkPolicy ${podName} exists) but did not run or go away within ${NAMED_WAIT_MS} ms: ${lastSeen}. A finished Pod stays until its creator ends it or the sweep removes it; a policy left without its Pod by a crashed creator is swept after 10 minutes.`,
      });
    await new Promise((resolve) => setTimeout(resolve, NAMED_POLL_MS));
  }
}
