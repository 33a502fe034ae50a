import type { Sandbox as CodeInterpreterSandbox } from "@e2b/code-interpreter";
import type { Sandbox } from "@sbx/core";
import { nativeHandleOf } from "@sbx/core/adapter";

/**
 * Escape hatch: the E2B SDK's `Sandbox` (from `@e2b/code-interpreter`) behind an E2B sandbox, for what sbx does not
 * cover (metrics, ports, pause). Outside the portable contract: code using it works on E2B only, and changes made
 * through it (network, lifetime) are not in the audit record and can weaken the sandbox.
 * Throws `InvalidArgumentError` (field `sandbox`) for a sandbox of another backend.
 */
export function e2bSandbox(sandbox: Sandbox): CodeInterpreterSandbox {
  return nativeHandleOf(sandbox, "e2b") as CodeInterpreterSandbox;
}
