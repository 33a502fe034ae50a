import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { promisify } from "node:util";
import { createSandboxProvider } from "@sbx/apple-container";
import { describeSandboxContract, describeVerifiedKillsContract } from "@sbx/contract";
import { CONTAINER_STANDIN_BINARY, removeStandinNamespace } from "@sbx/container-standin";
import { afterAll, beforeAll } from "vitest";
import { PLAIN_DOCKER_IMAGE } from "./fixtures/docker-contract.js";
import { dockerServersFixture, removeDockerNetwork } from "./fixtures/docker-servers.js";

/**
 * The full contract suite against @sbx/apple-container through the stand-in `container` executable
 * (tools/container-standin: Apple's CLI reproduced over the Docker Engine, 1.2.2 behaviour). Its containers live in a
 * namespace of this file's own, and its NAT network `default` is a Docker network this file creates, with the
 * network group's server containers on it. With no Docker Engine every test skips with the reason, or fails when
 * SBX_REQUIRE names apple-container. The suite runs with the adapter's default, commands through the sbx agent
 * (adr/0052); the verified-kills group runs again with one `container exec` per command (`agentCommands: "off"`),
 * the path commands take when the agent cannot run, so both paths' kills are proven.
 */
const execute = promisify(execFile);
const namespace = `contract-${randomBytes(4).toString("hex")}`;
const network = dockerServersFixture({ image: PLAIN_DOCKER_IMAGE, shareServers: true });
const environment = { CONTAINER_STANDIN_NAMESPACE: namespace, CONTAINER_STANDIN_DEFAULT_NETWORK: network.networkName };

beforeAll(async () => {
  // The stand-in's NAT network must exist before an egress-allowed sandbox joins it.
  await network.startServers(0).catch(() => undefined);
});

afterAll(async () => {
  await removeStandinNamespace(namespace);
  await network.closeServers();
  await removeDockerNetwork(network.networkName);
});

/** Runs the stand-in CLI as an operator would (outside sbx). */
function container(args: string[]) {
  return execute(CONTAINER_STANDIN_BINARY, args, { env: { ...process.env, ...environment } });
}

const settings = { image: PLAIN_DOCKER_IMAGE, binary: CONTAINER_STANDIN_BINARY, checkPlatform: false, environment };

describeSandboxContract("apple-container (stand-in)", () => createSandboxProvider(settings), {
  network: { startServers: (count) => network.startServers(count) },
  timeoutMs: 120_000,
  limits: { cpus: 1, memoryMiB: 256 },
  // As Docker's: 16 MiB still proves backpressure and completeness, at a quarter of the time on the loaded machine.
  largeFileBytes: 16 * 1024 * 1024,
  // An operator deleting the VM with the CLI.
  removeOutOfBand: async (sandbox) => void (await container(["delete", "--force", sandbox.id])),
  sandboxExists: async (id) =>
    container(["inspect", id]).then(
      () => true,
      () => false,
    ),
});

describeVerifiedKillsContract(
  "apple-container (stand-in, one exec per command)",
  () => createSandboxProvider({ ...settings, agentCommands: "off" }),
  {
    timeoutMs: 120_000,
  },
);
