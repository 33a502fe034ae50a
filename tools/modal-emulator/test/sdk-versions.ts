/** The two `modal` SDK versions the emulator is tested with: 0.11.1 (V2 sandboxes by default) and 0.10.1 (V1 by default). */
import * as modal011 from "modal";
import * as modal010 from "modal-v010";

/** [label, SDK module] pairs for describe.each. */
export const sdkVersions = [
  ["modal 0.11.1", modal011],
  ["modal 0.10.1", modal010 as unknown as typeof modal011],
] as const;
