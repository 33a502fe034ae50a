import { backendUsableForTests, type IntegrationTestBackend } from "@sbx/contract";
import { createSandboxProvider as createDockerProvider } from "@sbx/docker";

/** The image Docker tests run on. */
export const DOCKER_IMAGE = process.env.SBX_DOCKER_IMAGE ?? "sbx-test/python:3.11";

const dockerUsable = await backendUsableForTests({
  backend: "docker",
  suite: "the OpenAI Agents integration",
  detect: () => createDockerProvider({ image: DOCKER_IMAGE }).detect(),
});

/** The backends the OpenAI Agents integration's tests run on, with whether each is usable here (an unusable one skips loudly, above). */
export const BACKENDS: readonly IntegrationTestBackend[] = [
  { name: "fake", usable: true, target: "fake://" },
  { name: "docker", usable: dockerUsable, target: `docker://${DOCKER_IMAGE}` },
];
