import { CapabilityMethodMismatchError } from "../errors/index.js";
import type { Capabilities } from "../v1/capabilities.js";
import { CAPABILITY_METHOD_PAIRS } from "../v1/capability-methods.js";

/** The driver methods core supplies through the sandbox agent when a driver declares `codeAgent` (ADR 0037). */
const AGENT_METHODS = new Set(["runCode", "createCodeContext", "watchFiles", "openTerminal", "openPortConnection"]);

/**
 * Refuses a provider or driver whose capability flags and methods disagree (see `CAPABILITY_METHOD_PAIRS`), with a
 * `CapabilityMethodMismatchError` naming the flag and the method. A driver that declares `codeAgent` has the code
 * methods core gives it through the agent.
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
    const target = options.target as Record<string, unknown>;
    const carriesAgent = options.holder === "driver" && typeof target.codeAgent === "object" && target.codeAgent !== null;
    const methodPresent = typeof target[pair.method] === "function" || (carriesAgent && AGENT_METHODS.has(pair.method));
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
