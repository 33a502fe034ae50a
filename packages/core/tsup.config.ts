import { defineConfig } from "tsup";
import { baseTsupOptions } from "../../tsup.base.ts";

// The sandbox agent's Python source is bundled as text. Two entries: the user API and the adapter-author subpath
// (`@sbx/core/adapter`); tsup splits shared code into chunks so both see one registry and one set of error classes.
export default defineConfig({ ...baseTsupOptions, entry: ["src/index.ts", "src/adapter.ts"], loader: { ".py": "text" } });
