import { posixFileOperations } from "../posix/posix-files.js";
import type { SandboxDriverV1 } from "../v1/provider.js";

/** A driver with every file operation present: the driver's own where it has one, else core's default. */
export type CompleteDriver = SandboxDriverV1 & Required<Pick<SandboxDriverV1, "stat" | "list" | "remove" | "mkdir" | "rename">>;

/**
 * Fills in the optional file operations a driver leaves out with core's POSIX defaults built on its `spawn`
 * (ADR 0020). The driver's own methods always win, so an adapter written against the full contract runs unchanged.
 * Returns a new object; `runCode` and `createCodeContext` are left as they are (core's one-shot Python covers a
 * missing `runCode`).
 */
export function withDriverDefaults(driver: SandboxDriverV1): CompleteDriver {
  const defaults = posixFileOperations(driver);
  return new Proxy(driver, {
    get(target, property) {
      const value = Reflect.get(target, property, target) as unknown;
      if (value === undefined && typeof property === "string" && DEFAULTED.has(property)) return defaults[property as keyof typeof defaults];
      // Bound to the driver itself, so classes with private fields keep working.
      return typeof value === "function" ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  }) as CompleteDriver;
}

const DEFAULTED = new Set(["stat", "list", "remove", "mkdir", "rename"]);
