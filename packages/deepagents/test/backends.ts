import { createSandboxProvider as createDockerProvider } from "@sbx/docker";

/** The image Docker tests run on. */
export const DOCKER_IMAGE = process.env.SBX_DOCKER_IMAGE ?? "sbx-test/python:3.11";

const required = (process.env.SBX_REQUIRE ?? "").split(",").map((name) => name.trim());
const dockerStatus = await createDockerProvider({ image: DOCKER_IMAGE }).detect();
if (!dockerStatus.usable) {
  const message = `Docker is not usable here: ${dockerStatus.reason} ${dockerStatus.remedy}`;
  if (required.includes("docker")) throw new Error(`SBX_REQUIRE names docker, but ${message}`);
  console.warn(`\n[sbx] SKIPPING the deepagents integration's Docker tests: ${message}\n`);
}

/** A backend the deepagents tests run on, with whether it is usable here (unusable ones skip loudly, above). */
export interface TestBackend {
  readonly name: "fake" | "docker";
  readonly usable: boolean;
  /** The `createSandbox` target. */
  readonly target: string;
}

/** The fake and Docker. */
export const BACKENDS: readonly TestBackend[] = [
  { name: "fake", usable: true, target: "fake://" },
  { name: "docker", usable: dockerStatus.usable, target: `docker://${DOCKER_IMAGE}` },
];
