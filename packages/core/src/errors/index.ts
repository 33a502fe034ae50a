export * from "./sbx-error.js";
export * from "./errors.js";
