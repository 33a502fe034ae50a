import { it } from "vitest";
import { describeDockerContract, ENTRYPOINT_DOCKER_IMAGE, PLAIN_DOCKER_IMAGE } from "./fixtures/docker-contract.js";

/**
 * The contract suite against @sbx/docker on an image with a non-shell ENTRYPOINT and another WORKDIR, with commands
 * through the sandbox agent from the first command (adr/0025), so both command paths pass the whole suite.
 */
if (ENTRYPOINT_DOCKER_IMAGE !== PLAIN_DOCKER_IMAGE) describeDockerContract(ENTRYPOINT_DOCKER_IMAGE, { agentCommands: "start" });
else it.skip(`${ENTRYPOINT_DOCKER_IMAGE} is SBX_DOCKER_IMAGE: docker.contract.test.ts covers it`);
