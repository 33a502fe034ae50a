import type { Options } from "tsup";

/** Shared tsup settings: ESM with type declarations and source maps, as every @sbx package publishes. */
export const baseTsupOptions: Options = {
  entry: ["src/index.ts"],
  format: ["esm"],
  dts: true,
  sourcemap: true,
  clean: true,
  target: "node20",
};
