export * from "./sbx-error.js";
export * from "./errors.js";
export * from "./credential-errors.js";
