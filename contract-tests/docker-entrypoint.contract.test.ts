import { it } from "vitest";
import { describeDockerContract, ENTRYPOINT_DOCKER_IMAGE, PLAIN_DOCKER_IMAGE } from "./fixtures/docker-contract.js";

/** The contract suite against @sbx/docker on an image with a non-shell ENTRYPOINT and another WORKDIR. */
if (ENTRYPOINT_DOCKER_IMAGE !== PLAIN_DOCKER_IMAGE) describeDockerContract(ENTRYPOINT_DOCKER_IMAGE);
else it.skip(`${ENTRYPOINT_DOCKER_IMAGE} is SBX_DOCKER_IMAGE: docker.contract.test.ts covers it`);
