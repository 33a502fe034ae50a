import { mkdtemp, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type SandboxDriverV1, type SpawnRequest, posixFileOperations } from "../src/adapter.ts";
import { createHostProcessDriver } from "./support/host-process-driver.ts";

describe("core's file helper needs python3 (ADR 0031)", () => {
  let workspace: string;
  let bin: string;
  beforeAll(async () => {
    workspace = await mkdtemp(join(tmpdir(), "sbx-no-python-"));
    bin = await mkdtemp(join(tmpdir(), "sbx-no-python-bin-"));
    await symlink("/bin/sh", join(bin, "sh"));
    await writeFile(join(workspace, "a.txt"), "a");
  });
  afterAll(async () => {
    await rm(workspace, { recursive: true, force: true });
    await rm(bin, { recursive: true, force: true });
  });

  it("an image without python3 is refused with CapabilityNotSupportedError naming the requirement, never served by a weaker fallback", async () => {
    const driver = createHostProcessDriver(workspace);
    // The sandbox's PATH has a shell and nothing else: no python3 anywhere on it.
    const withoutPython: SandboxDriverV1 = {
      ...driver,
      spawn: (request: SpawnRequest) => driver.spawn({ ...request, env: { ...request.env, PATH: bin } }),
    };
    const files = posixFileOperations(withoutPython);
    for (const attempt of [
      () => files.list(workspace, {}),
      () => files.stat(join(workspace, "a.txt"), {}),
      () => files.readFile(join(workspace, "a.txt"), {}),
    ]) {
      const error = await attempt().catch((caught: unknown) => caught);
      expect(error).toMatchObject({ code: "SBX_CAPABILITY_NOT_SUPPORTED", capability: "FILES" });
      expect(String((error as Error).message)).toContain("python3");
    }
  });

  it("with python3 the same operations work on the host-process driver", async () => {
    const files = posixFileOperations(createHostProcessDriver(workspace));
    expect((await files.list(workspace, {})).map((entry) => entry.name)).toEqual(["a.txt"]);
    expect((await files.stat(join(workspace, "a.txt"), {})).size).toBe(1);
  });
});
