import { describeSandboxContract } from "@sbx/contract";
import { createSandboxProvider } from "@sbx/docker";
import { afterAll } from "vitest";
import { dockerServersFixture, removeDockerNetwork } from "./fixtures/docker-servers.js";
import { containerExists, removeContainerOutOfBand } from "./fixtures/remove-out-of-band.js";

/** The images the Docker adapter is proven against: a plain one and one with a non-shell ENTRYPOINT and another WORKDIR. */
const images = [...new Set([process.env.SBX_DOCKER_IMAGE ?? "sbx-test/python:3.11", "sbx-test/python-entrypoint:3.11"])];

for (const image of images) {
  const network = dockerServersFixture({ image });
  afterAll(async () => {
    // Sandboxes on the network are gone by now; the engine refuses to remove a network still in use.
    await removeDockerNetwork(network.networkName);
  });
  // The second image runs with commands through the sandbox agent from the first command (adr/0025): both paths pass.
  describeSandboxContract(`docker (${image})`, () => createSandboxProvider(image === images[0] ? { image } : { image, agentCommands: "start" }), {
    network,
    timeoutMs: 120_000,
    removeOutOfBand: (sandbox) => removeContainerOutOfBand(sandbox.id),
    sandboxExists: containerExists,
  });
}
