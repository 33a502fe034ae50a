import { defineConfig } from "tsup";
import { baseTsupOptions } from "../../tsup.base.ts";

// The sandbox agent's Python source is bundled as text.
export default defineConfig({ ...baseTsupOptions, loader: { ".py": "text" } });
