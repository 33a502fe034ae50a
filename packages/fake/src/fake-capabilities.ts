import { defineCapabilities, type Capabilities } from "@sbx/core";

/** The fake's full manifest. Must match the copy in @sbx/core's backend registry. */
export const FAKE_CAPABILITIES: Capabilities = defineCapabilities({
  STATEFUL_CODE: true,
  EGRESS_ALLOWLIST: true,
  BACKGROUND_COMMANDS: true,
  STDIN: true,
  HOST_MOUNTS: true,
  LIST_SANDBOXES: true,
  NAMED_SANDBOXES: true,
  SET_LIFETIME: true,
  FILE_WATCH: true,
  SNAPSHOTS: true,
  languages: ["python"],
});
