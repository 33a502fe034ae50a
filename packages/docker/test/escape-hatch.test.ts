/**
 * The escape hatch: dockerContainer(sandbox) is the dockerode Container behind a Docker sandbox (the same container
 * sbx created, with the limits sbx applied); a sandbox of another backend is refused by name.
 */
import { InvalidArgumentError, type Sandbox } from "@sbx/core";
import { expect, it } from "vitest";
import { dockerContainer } from "../src/index.js";
import { createTestSandbox, describeWithDocker } from "./docker-test-environment.js";

describeWithDocker("dockerContainer(sandbox)", () => {
  it("returns the dockerode Container of the sandbox, with the memory limit sbx applied", async () => {
    await using sandbox = await createTestSandbox({ limits: { memoryMiB: 192 }, metadata: { test: "escape-hatch" } });
    const details = await dockerContainer(sandbox).inspect();
    expect(details.Id.startsWith(sandbox.id) || sandbox.id.startsWith(details.Id.slice(0, 12))).toBe(true);
    expect(details.HostConfig.Memory).toBe(192 * 1024 * 1024);
    expect(details.State.Running).toBe(true);
  });

  it("works through the debug logger too (the logged driver keeps the native object)", async () => {
    const entries: string[] = [];
    await using sandbox = await createTestSandbox({ logger: (entry) => entries.push(entry.operation), metadata: { test: "escape-hatch" } });
    expect((await dockerContainer(sandbox).inspect()).State.Running).toBe(true);
    expect(entries).toEqual(["create"]);
  });
});

it("something that is not an sbx sandbox is InvalidArgumentError on sandbox (another backend's: see core's native-handle test)", () => {
  let error: unknown;
  try {
    dockerContainer({ backend: "docker" } as Sandbox);
  } catch (caught) {
    error = caught;
  }
  expect(error).toBeInstanceOf(InvalidArgumentError);
  expect((error as InvalidArgumentError).field).toBe("sandbox");
  expect((error as Error).message).toContain("createSandbox()");
});
