export { createSandboxProvider, modal, DEFAULT_MODAL_IMAGE } from "./modal-provider.js";
export { MODAL_CAPABILITIES } from "./modal-capabilities.js";
export { MODAL_MAX_TIMEOUT_MS } from "./modal-resources.js";
export { STDIN_WRITE_BYTES } from "./modal-driver.js";
export { modalSettingsSchema, parseModalSettings, type ModalSettings, type ResolvedModalSettings } from "./modal-settings.js";
export { modalSandbox } from "./native.js";
