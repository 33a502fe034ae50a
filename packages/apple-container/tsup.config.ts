import { defineConfig } from "tsup";
import { baseTsupOptions } from "../../tsup.base.ts";

export default defineConfig({ ...baseTsupOptions });
