import { backendUsableForTests } from "@sbx/contract";
import { createSandbox, type Sandbox } from "@sbx/core";
import { createSandboxProvider as createDockerProvider } from "@sbx/docker";
import { createSandboxProvider as createFakeProvider } from "@sbx/fake";

/** The image Docker tests run on. */
export const DOCKER_IMAGE = process.env.SBX_DOCKER_IMAGE ?? "sbx-test/python:3.11";

const dockerUsable = await backendUsableForTests({
  backend: "docker",
  suite: "the AI SDK integration",
  detect: () => createDockerProvider({ image: DOCKER_IMAGE }).detect(),
});

/** A backend the AI SDK tests run on, with whether it is usable here (unusable ones skip loudly, above). */
export interface TestBackend {
  readonly name: "fake" | "docker";
  readonly usable: boolean;
  create(): Promise<Sandbox>;
}

/** The fake and Docker. */
export const BACKENDS: readonly TestBackend[] = [
  { name: "fake", usable: true, create: () => createSandbox(createFakeProvider()) },
  {
    name: "docker",
    usable: dockerUsable,
    create: () => createSandbox(createDockerProvider({ image: DOCKER_IMAGE }), { metadata: { test: "sbx-ai-sdk" } }),
  },
];
