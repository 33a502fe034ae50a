import { BackendUnavailableError, ProviderError, SandboxNotFoundError, SbxError } from "@sbx/core";

/** Where an API error happened, for the message and the typed fields of the mapped error. */
export interface KubernetesErrorContext {
  /** What the adapter was doing, for example `"create the Pod"`. */
  readonly operation: string;
  /** The sandbox involved, when there is one (a 404 on its Pod then means it is gone). */
  readonly sandboxId?: string;
}

/** The RBAC the adapter needs, named in every 401/403 message (docs/backends/kubernetes.md has the Role). */
export const KUBERNETES_RBAC_REMEDY =
  "Give the kubeconfig's user a Role in the sandbox namespace with pods create/get/list/delete, pods/exec create, events list and networkpolicies create/get/list/delete, plus get on the namespace (docs/backends/kubernetes.md).";

/** The HTTP status of a client-node `ApiException` (or a `{ code }` / `{ statusCode }` error), if any. */
export function statusCodeOf(error: unknown): number | undefined {
  if (typeof error !== "object" || error === null) return undefined;
  const code = (error as { code?: unknown }).code ?? (error as { statusCode?: unknown }).statusCode;
  return typeof code === "number" ? code : undefined;
}

/** The API server's `Status.message` from an `ApiException` body, else the error's message. */
export function detailOf(error: unknown): string {
  const body = typeof error === "object" && error !== null ? (error as { body?: unknown }).body : undefined;
  if (typeof body === "string") {
    try {
      const parsed = JSON.parse(body) as { message?: unknown };
      if (typeof parsed.message === "string") return parsed.message;
    } catch {
      return body.slice(0, 500);
    }
  }
  if (typeof body === "object" && body !== null && typeof (body as { message?: unknown }).message === "string")
    return (body as { message: string }).message;
  return error instanceof Error ? error.message : String(error);
}

/** Network-level failures reaching the API server (nothing was changed on the cluster). */
const UNREACHABLE = /ECONNREFUSED|ENOTFOUND|EHOSTUNREACH|ETIMEDOUT|ECONNRESET|socket hang up|fetch failed/i;

/**
 * Maps an error from `@kubernetes/client-node` onto a core error, keeping it as `cause`:
 *
 * | API answer | core error |
 * |---|---|
 * | 401, 403 | `BackendUnavailableError` (not retryable), with the RBAC the adapter needs |
 * | 404 on a sandbox's Pod | `SandboxNotFoundError` |
 * | 409, 429, 5xx | `ProviderError`, retryable |
 * | the API server unreachable | `BackendUnavailableError`, retryable |
 * | anything else | `ProviderError` |
 */
export function mapKubernetesError(error: unknown, context: KubernetesErrorContext): SbxError {
  if (SbxError.isInstance(error)) return error;
  const code = statusCodeOf(error);
  const detail = detailOf(error);
  const where = context.sandboxId ? ` (sandbox ${context.sandboxId})` : "";
  if (code === 401 || code === 403) {
    return new BackendUnavailableError({
      backend: "k8s",
      cause: error,
      retryable: false,
      remedy: KUBERNETES_RBAC_REMEDY,
      message: `The Kubernetes API refused to ${context.operation}${where} (HTTP ${code}): ${detail}. ${KUBERNETES_RBAC_REMEDY}`,
    });
  }
  if (code === 404 && context.sandboxId !== undefined) {
    return new SandboxNotFoundError({
      backend: "k8s",
      cause: error,
      sandboxId: context.sandboxId,
      message: `The sandbox's Pod is gone while trying to ${context.operation}${where}: it was deleted, its node vanished, or it never existed. ${detail}`,
    });
  }
  if (code === 409 || code === 429 || (code !== undefined && code >= 500)) {
    return new ProviderError({
      backend: "k8s",
      cause: error,
      retryable: true,
      message: `The Kubernetes API failed to ${context.operation}${where} (HTTP ${code}); retry later: ${detail}`,
    });
  }
  if (code === undefined && UNREACHABLE.test(detail)) {
    return new BackendUnavailableError({
      backend: "k8s",
      cause: error,
      retryable: true,
      remedy: "Check that the kubeconfig's cluster is reachable from here (kubectl version).",
      message: `The Kubernetes API server could not be reached to ${context.operation}${where}: ${detail}`,
    });
  }
  return new ProviderError({
    backend: "k8s",
    cause: error,
    message: `The Kubernetes backend failed to ${context.operation}${where}${code === undefined ? "" : ` (HTTP ${code})`}: ${detail}`,
  });
}
