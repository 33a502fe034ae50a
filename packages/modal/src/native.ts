import type { Sandbox } from "@sbx/core";
import { nativeHandleOf } from "@sbx/core/adapter";
import type { Sandbox as ModalSandbox } from "modal";

/**
 * Escape hatch: the Modal SDK's `Sandbox` behind a Modal sandbox, for what sbx does not cover (tunnels, snapshots).
 * Outside the portable contract: code using it works on Modal only, and changes made through it are not in the
 * audit record and can weaken the sandbox. Throws `InvalidArgumentError` (field `sandbox`) for a sandbox of another backend.
 */
export function modalSandbox(sandbox: Sandbox): ModalSandbox {
  return nativeHandleOf(sandbox, "modal") as ModalSandbox;
}
