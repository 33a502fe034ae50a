export { createSandboxProvider, modal, DEFAULT_MODAL_IMAGE } from "./modal-provider.js";
export { MODAL_CAPABILITIES } from "./modal-capabilities.js";
export { ModalDriver, MODAL_WORKSPACE, KILLED_EXIT_CODE, OUTPUT_DRAIN_GRACE_MS, type ModalDriverOptions } from "./modal-driver.js";
export { planModalNetwork, classifyAllowEntry, MODAL_DOMAIN_ENFORCEMENT, type ModalNetworkPlan, type ModalNetworkRequest } from "./modal-network-policy.js";
export { planModalLimits, planModalLifetime, MODAL_MAX_TIMEOUT_MS, type ModalLimitsRequest } from "./modal-resources.js";
export { modalSettingsSchema, parseModalSettings, type ModalSettings, type ResolvedModalSettings } from "./modal-settings.js";
export { mapModalError, MODAL_CREDENTIALS_REMEDY, type ModalErrorContext } from "./map-modal-error.js";
export { createModalClient, clientHasCredentials } from "./modal-client.js";
export { COMMAND_WRAPPER, KILL_COMMAND_SCRIPT, KILL_PROCESS_TREE_SCRIPT, COMMAND_MARKER_VARIABLE } from "./kill-process-tree.js";
