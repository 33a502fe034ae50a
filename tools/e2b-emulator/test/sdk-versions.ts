/** The two e2b SDK versions every test runs against. */
import { Sandbox as SandboxLatest } from "e2b";
import { Sandbox as Sandbox245 } from "e2b-v245";

/** [label, Sandbox class] pairs for describe.each. */
export const sdkVersions = [
  ["e2b 2.51.0", SandboxLatest],
  ["e2b 2.45.0", Sandbox245 as unknown as typeof SandboxLatest],
] as const;
