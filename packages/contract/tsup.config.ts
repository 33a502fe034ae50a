import { defineConfig } from "tsup";
import { baseTsupOptions } from "../../tsup.base.ts";

/** vitest and @sbx/core are peer dependencies: never bundled, so the adapter's own copies are used. */
export default defineConfig({ ...baseTsupOptions, external: ["vitest", "@sbx/core"] });
