import { describeDockerContract, PLAIN_DOCKER_IMAGE } from "./fixtures/docker-contract.js";

/** The contract suite against @sbx/docker on the plain image (the ENTRYPOINT image has its own file). */
describeDockerContract(PLAIN_DOCKER_IMAGE);
