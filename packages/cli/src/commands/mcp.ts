import type { CliEnvironment, OutputMode } from "../terminal.js";
import { UsageError } from "../errors.js";

/** `sbx mcp`: not built yet in this version. */
export async function mcpCommand(_environment: CliEnvironment, _mode: OutputMode, _flags: Record<string, unknown>): Promise<number> {
  throw new UsageError("sbx mcp is not available in this build.");
}
