import type { CreateSandboxOptions, SandboxProviderV1 } from "@sbx/core";

/** How the MCP server makes sandboxes. One sandbox per MCP session, created on first use, killed when the session ends. */
export interface SandboxMcpServerOptions {
  /**
   * Backend target URI chosen when the server starts, for example `"docker://python:3.12-slim"`, `"e2b://"`,
   * `"fake://"`, or a provider object. Clients cannot change it. Default `"auto"`.
   */
  target?: string | SandboxProviderV1;
  /**
   * Options for every sandbox the server creates. The network policy is the server's, never the client's:
   * egress is denied unless the server was started with a policy here. Default `{ network: { egress: "deny" } }`.
   */
  sandboxOptions?: Omit<CreateSandboxOptions, "signal">;
  /** Bytes of each output stream (and of a file read) returned to the client; the rest is cut with a note saying so. Default 64 KiB. */
  outputLimitBytes?: number;
  /** Server name announced to clients. Default `"sbx"`. */
  name?: string;
  /** Server version announced to clients. Default the package version. */
  version?: string;
}

/** Default bytes of output returned to the client per stream. */
export const DEFAULT_TOOL_OUTPUT_LIMIT_BYTES = 64 * 1024;
/** The package version, announced to clients. */
export const PACKAGE_VERSION = "0.1.0";
