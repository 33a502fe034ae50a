import { CapabilityMethodMismatchError } from "../errors/index.js";
import type { Capabilities } from "../v1/capabilities.js";
import { CAPABILITY_METHOD_PAIRS } from "../v1/capability-methods.js";

/**
 * Refuses a provider or driver whose capability flags and methods disagree (see `CAPABILITY_METHOD_PAIRS`), with a
 * `CapabilityMethodMismatchError` naming the flag and the method.
 */
export function refuseCapabilityMethodMismatch(options: {
  holder: "provider" | "driver";
  target: object;
  capabilities: Capabilities;
  backend: string;
}): void {
  for (const pair of CAPABILITY_METHOD_PAIRS) {
    if (pair.holder !== options.holder) continue;
    const flagDeclared = options.capabilities[pair.capability];
    const methodPresent = typeof (options.target as Record<string, unknown>)[pair.method] === "function";
    const missingMethod = flagDeclared && !methodPresent;
    const missingFlag = !flagDeclared && methodPresent && pair.rule === "exactly";
    if (!missingMethod && !missingFlag) continue;
    throw new CapabilityMethodMismatchError({
      backend: options.backend,
      capability: pair.capability,
      method: pair.method,
      holder: pair.holder,
      flagDeclared,
    });
  }
}
