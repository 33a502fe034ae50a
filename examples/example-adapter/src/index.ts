import type { SandboxProviderV1 } from "@sbx/core";
import { createExampleProvider, type ExampleProviderSettings } from "./example-provider.js";
export { createExampleProvider, type ExampleProviderSettings };
/** The entry point every sbx adapter exports: `registerProvider(scheme, createSandboxProvider)` finds it by this name. */
export function createSandboxProvider(settings?: Record<string, unknown>): SandboxProviderV1 {
  return createExampleProvider(settings as ExampleProviderSettings | undefined);
}
