/** One backend call, as the debug logger sees it. Every text field has the sandbox's secrets redacted. */
export interface SandboxLogEntry {
  /** Backend name, for example `"docker"`. */
  readonly backend: string;
  /** The call: `"create"`, `"connect"`, `"detect"`, or a driver method (`"spawn"`, `"readFile"`, `"destroy"`, ...). */
  readonly operation: string;
  /** The sandbox's id, once it exists. */
  readonly sandboxId?: string;
  /** What the call was about (a command line, a path), redacted and cut to 200 characters. */
  readonly detail?: string;
  /** How long the backend took, in milliseconds. */
  readonly durationMs: number;
  /** `"ok"` or `"error"`. */
  readonly outcome: "ok" | "error";
  /** The sbx error code when `outcome` is `"error"` (`"SBX_PROVIDER"` for an untyped failure). */
  readonly errorCode?: string;
  /** One readable line with all of the above, redacted. */
  readonly message: string;
}

/** Receives debug log entries. It must not throw; if it does, sbx ignores the exception. */
export type SandboxLogger = (entry: SandboxLogEntry) => void;
