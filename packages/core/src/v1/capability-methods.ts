import type { CapabilityName } from "./capabilities.js";

/**
 * One capability flag and the adapter method that implements it.
 * - `holder`: the object the method lives on, the provider or each driver it makes.
 * - `rule`: `"exactly"` means the method is present exactly when the flag is on; `"flag-needs-method"` means the
 *   flag needs the method, but the method is also allowed without the flag (core uses it for something else).
 */
export interface CapabilityMethodPair {
  /** The capability flag. */
  readonly capability: CapabilityName;
  /** The object holding the method. */
  readonly holder: "provider" | "driver";
  /** The method name on that object. */
  readonly method: string;
  /** How strictly the two go together. */
  readonly rule: "exactly" | "flag-needs-method";
}

/**
 * Every capability flag that has a method, in one table (ADR 0035; the listing and naming rows: ADR 0050). Core checks providers against it when they are
 * loaded or registered, and drivers when they are made. Flags without a method of their own (`RICH_RESULTS`,
 * `EGRESS_ALLOWLIST`, `BACKGROUND_COMMANDS`, `STDIN`, `HOST_MOUNTS`, `RESOURCE_LIMITS`) are held by the contract
 * suite instead. `runCode` without `STATEFUL_CODE` is allowed: it is the one-shot code channel.
 */
export const CAPABILITY_METHOD_PAIRS: readonly CapabilityMethodPair[] = Object.freeze([
  { capability: "RECONNECT", holder: "provider", method: "connect", rule: "exactly" },
  { capability: "LIST_SANDBOXES", holder: "provider", method: "list", rule: "exactly" },
  { capability: "NAMED_SANDBOXES", holder: "provider", method: "getOrCreate", rule: "exactly" },
  { capability: "STATEFUL_CODE", holder: "driver", method: "createCodeContext", rule: "exactly" },
  { capability: "STATEFUL_CODE", holder: "driver", method: "runCode", rule: "flag-needs-method" },
  { capability: "SET_LIFETIME", holder: "driver", method: "setLifetime", rule: "flag-needs-method" },
  // A driver with the sbx agent carries `watchFiles` whether it declares FILE_WATCH or not (ADR 0049).
  { capability: "FILE_WATCH", holder: "driver", method: "watchFiles", rule: "flag-needs-method" },
  { capability: "PTY", holder: "driver", method: "openTerminal", rule: "flag-needs-method" },
  { capability: "PAUSE", holder: "driver", method: "pause", rule: "flag-needs-method" },
  { capability: "PAUSE", holder: "driver", method: "resume", rule: "flag-needs-method" },
  { capability: "PORTS", holder: "driver", method: "openPortConnection", rule: "flag-needs-method" },
  // Snapshots (ADR 0056): the driver takes them, the provider lists and deletes them.
  { capability: "SNAPSHOTS", holder: "driver", method: "snapshot", rule: "flag-needs-method" },
  { capability: "SNAPSHOTS", holder: "provider", method: "listSnapshots", rule: "exactly" },
  { capability: "SNAPSHOTS", holder: "provider", method: "deleteSnapshot", rule: "exactly" },
] as const);
