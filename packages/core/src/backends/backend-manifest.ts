import type { Capabilities } from "../v1/capabilities.js";

/** What core knows about a backend without loading its adapter. */
export interface BackendManifest {
  /** URI scheme and backend name, for example `"docker"`. */
  readonly backend: string;
  /** npm package that implements it, for example `"@sbx/docker"`. */
  readonly packageName: string;
  /** The capability manifest. */
  readonly capabilities: Capabilities;
  /** True when the backend is an isolation boundary (used by `"auto"`); false for the fake. */
  readonly isolating: boolean;
}
