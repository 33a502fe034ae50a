import { InvalidArgumentError } from "../errors/index.js";
import type { SandboxDriverV1 } from "../v1/provider.js";
import type { Sandbox } from "../v1/sandbox.js";

/** The driver behind each sandbox core built, so an adapter's escape hatch can reach the backend's own object. */
const drivers = new WeakMap<Sandbox, SandboxDriverV1>();

/** Records the driver behind a sandbox (called by `createSandboxFromDriver`). */
export function rememberDriver(sandbox: Sandbox, driver: SandboxDriverV1): void {
  drivers.set(sandbox, driver);
}

/**
 * For adapter authors: the backend's own object (`driver.native`) behind a sandbox of `backend`, for a typed escape
 * hatch such as `dockerContainer(sandbox)`. Throws `InvalidArgumentError` (field `sandbox`) when the sandbox was not
 * made by sbx, belongs to another backend, or its driver exposes no native object.
 */
export function nativeHandleOf(sandbox: Sandbox, backend: string): unknown {
  const driver = typeof sandbox === "object" && sandbox !== null ? drivers.get(sandbox) : undefined;
  if (!driver)
    throw new InvalidArgumentError({
      field: "sandbox",
      backend,
      message: `Invalid sandbox: expected a sandbox returned by createSandbox() or connectSandbox().`,
    });
  if (sandbox.backend !== backend)
    throw new InvalidArgumentError({
      field: "sandbox",
      backend,
      message: `Invalid sandbox: it runs on the ${sandbox.backend} backend, not ${backend}; use the ${sandbox.backend} adapter's accessor.`,
    });
  if (driver.native === undefined)
    throw new InvalidArgumentError({
      field: "sandbox",
      backend,
      message: `Invalid sandbox: the ${backend} adapter exposes no native object for it.`,
    });
  return driver.native;
}
