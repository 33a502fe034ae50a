export { createSandboxProvider, e2b, DEFAULT_E2B_TEMPLATE } from "./e2b-provider.js";
export { E2B_CAPABILITIES } from "./e2b-capabilities.js";
export { e2bSettingsSchema, parseE2BSettings, type E2BSettings, type ResolvedE2BSettings } from "./e2b-settings.js";
export { e2bSandbox } from "./native.js";
