export * from "./sbx-error.js";
export * from "./errors.js";
export * from "./credential-errors.js";
export * from "./agent-errors.js";
export * from "./path-error-reason.js";
