import { expect, it } from "vitest";
import { createTestSandbox, describeWithDocker, docker } from "./docker-test-environment.js";

describeWithDocker("a sandbox whose container vanishes is SandboxNotFoundError from every operation", () => {
  it("removed out of band: commands, files and runCode raise SandboxNotFoundError; kill() still resolves", async () => {
    const sandbox = await createTestSandbox();
    await sandbox.files.write("kept.txt", "x");
    await docker.getContainer(sandbox.id).remove({ force: true, v: true });
    const calls: Array<[string, () => Promise<unknown>]> = [
      ["commands.run", () => sandbox.commands.run("echo hi")],
      ["commands.start", () => sandbox.commands.start("sleep 1")],
      ["runCode", () => sandbox.runCode("print(1)")],
      ["files.read", () => sandbox.files.read("kept.txt")],
      ["files.write", () => sandbox.files.write("new.txt", "y")],
      ["files.list", () => sandbox.files.list(".")],
      ["files.stat", () => sandbox.files.stat("kept.txt")],
      ["files.remove", () => sandbox.files.remove("kept.txt")],
      ["files.mkdir", () => sandbox.files.mkdir("d")],
      ["files.rename", () => sandbox.files.rename("kept.txt", "moved.txt")],
    ];
    for (const [name, call] of calls) {
      await expect(call(), name).rejects.toMatchObject({ code: "SBX_SANDBOX_NOT_FOUND", sandboxId: sandbox.id });
    }
    await sandbox.kill();
    await sandbox.kill();
  });

  it("removed while a command runs: the command raises SandboxNotFoundError, not exit 137", async () => {
    const sandbox = await createTestSandbox();
    const running = sandbox.commands.run("sleep 30");
    // Handled from the start: the engine answers a SIGKILL only once the container stopped, so the command may fail
    // before the kill call below returns; a rejection with no handler yet is an unhandled rejection (adr/0034).
    const outcome = running.then(
      () => "resolved",
      (error: unknown) => error,
    );
    await new Promise((resolve) => setTimeout(resolve, 700));
    await docker
      .getContainer(sandbox.id)
      .kill()
      .catch(() => {});
    expect(await outcome).toMatchObject({ code: "SBX_SANDBOX_NOT_FOUND" });
    await sandbox.kill();
  });

  it("its lifetime ending during a command: SandboxNotFoundError", async () => {
    const sandbox = await createTestSandbox({ timeoutMs: 3000 });
    await expect(sandbox.commands.run("sleep 30")).rejects.toMatchObject({ code: "SBX_SANDBOX_NOT_FOUND" });
    await sandbox.kill();
  });
});
