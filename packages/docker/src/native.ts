import type { Sandbox } from "@sbx/core";
import { nativeHandleOf } from "@sbx/core/adapter";
import type Docker from "dockerode";

/**
 * Escape hatch: the dockerode `Container` behind a Docker sandbox, for what sbx does not cover (inspect, stats,
 * networks). Outside the portable contract: code using it works on Docker only, and changes made through it (for
 * example to the container's network or user) are not in the audit record and can weaken the sandbox.
 * Throws `InvalidArgumentError` (field `sandbox`) for a sandbox of another backend.
 */
export function dockerContainer(sandbox: Sandbox): Docker.Container {
  return nativeHandleOf(sandbox, "docker") as Docker.Container;
}
