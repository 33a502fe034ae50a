import { expect, it } from "vitest";
import { createTestSandbox, describeWithDocker, docker } from "./docker-test-environment.js";

const info = await docker.info().catch(() => ({ Runtimes: {} }));
const hasRunsc = Object.keys((info as { Runtimes?: Record<string, unknown> }).Runtimes ?? {}).includes("runsc");
if (!hasRunsc)
  console.warn(
    '\n[sbx] SKIPPING the gVisor test: the engine has no "runsc" runtime (apt-get install runsc; register it in /etc/docker/daemon.json with runtimeArgs ["--network=none"]; reload the engine).\n',
  );
const describeGvisor = hasRunsc ? describeWithDocker : describeWithDocker.skip;

describeGvisor("gVisor (runsc) runtime", () => {
  it("runs under runsc, recorded in the audit record, with the same hardening", async () => {
    await using sandbox = await createTestSandbox({}, { runtime: "runsc" });
    const kernel = await sandbox.commands.run("uname -r; echo hi from gvisor");
    expect(kernel.stdout).toContain("hi from gvisor");
    expect(sandbox.audit().policies.runtime).toMatchObject({ requested: "runsc", applied: "runsc" });
    const inspect = await docker.getContainer(sandbox.id).inspect();
    expect((inspect.HostConfig as { Runtime?: string }).Runtime).toBe("runsc");
    await sandbox.files.write("g.txt", "gvisor file");
    expect(await sandbox.files.read("g.txt")).toBe("gvisor file");
  });
});

describeWithDocker("runtime setting", () => {
  it("an unknown runtime is named in the error and nothing is created", async () => {
    await expect(createTestSandbox({}, { runtime: "sbx-no-such-runtime" })).rejects.toMatchObject({
      code: "SBX_INVALID_ARGUMENT",
      field: "settings.runtime",
    });
  });
});
