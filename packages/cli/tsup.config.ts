import { defineConfig } from "tsup";
import { baseTsupOptions } from "../../tsup.base.ts";

// Two entries: the library (`run`, for tests and embedding) and the `sbx` executable.
export default defineConfig({ ...baseTsupOptions, entry: ["src/index.ts", "src/bin.ts"] });
