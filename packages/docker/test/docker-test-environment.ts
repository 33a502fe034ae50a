import { createSandbox, type CreateSandboxOptions, type Sandbox } from "@sbx/core";
import Docker from "dockerode";
import { describe } from "vitest";
import { createSandboxProvider } from "../src/index.js";

/** The image the adapter tests run on (CI builds it locally). */
export const TEST_IMAGE = process.env.SBX_DOCKER_IMAGE ?? "sbx-test/python:3.11";

/** A dockerode client for assertions made behind the adapter's back. */
export const docker = new Docker();

const required = (process.env.SBX_REQUIRE ?? "")
  .split(",")
  .map((name) => name.trim())
  .includes("docker");
const status = await createSandboxProvider({ image: TEST_IMAGE }).detect();
if (!status.usable) {
  const message = `Docker is not usable here: ${status.reason} ${status.remedy}`;
  if (required) throw new Error(`SBX_REQUIRE names docker, but ${message}`);
  console.warn(`\n[sbx] SKIPPING the Docker adapter tests: ${message}\n`);
}

/** `describe`, skipped loudly (or failing under SBX_REQUIRE=docker) when the engine is unreachable. */
export const describeWithDocker = (status.usable ? describe : describe.skip) as unknown as typeof describe;

/** `settings.agentCommands` for every test sandbox when set (`start` runs the whole project with commands through the agent). */
const agentCommands = process.env.SBX_DOCKER_AGENT_COMMANDS ? { agentCommands: process.env.SBX_DOCKER_AGENT_COMMANDS } : {};

/** Creates a sandbox on the test image. */
export function createTestSandbox(options: CreateSandboxOptions = {}, settings: Record<string, unknown> = {}): Promise<Sandbox> {
  return createSandbox(createSandboxProvider({ image: TEST_IMAGE, ...agentCommands, ...settings }), options);
}
