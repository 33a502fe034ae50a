import { resolveDriverMethods } from "../channel/driver-methods.js";
import type { SandboxDriverV1 } from "../v1/provider.js";

/** A driver with every file operation present: the driver's own where it has one, else core's default. */
export type CompleteDriver = SandboxDriverV1 &
  Required<Pick<SandboxDriverV1, "readFile" | "writeFile" | "stat" | "list" | "remove" | "mkdir" | "rename">>;

/**
 * Returns a plain driver object with the optional file operations a driver leaves out filled in from core's POSIX
 * defaults over its `spawn` (ADR 0020), resolved once (ADR 0037). The driver's own methods always win. Core itself
 * resolves a driver's methods when it makes a sandbox; this is for adapters and tests that call a driver directly.
 */
export function withDriverDefaults(driver: SandboxDriverV1): CompleteDriver {
  const methods = resolveDriverMethods(driver, { backend: "driver" });
  return {
    get id() {
      return driver.id;
    },
    get workspace() {
      return driver.workspace;
    },
    get audit() {
      return driver.audit;
    },
    get native() {
      return driver.native;
    },
    ...methods,
    runCode: driver.runCode?.bind(driver),
    createCodeContext: driver.createCodeContext?.bind(driver),
  };
}
