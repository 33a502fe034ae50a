import { defineConfig } from "tsup";
import { baseTsupOptions } from "../../tsup.base.ts";

// just-bash and pyodide stay external (dependencies are externalised by default): both ship WebAssembly and data files.
export default defineConfig({ ...baseTsupOptions });
