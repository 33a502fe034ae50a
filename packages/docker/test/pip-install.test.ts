import type { Sandbox } from "@sbx/core";
import { afterAll, beforeAll, expect, it } from "vitest";
import type { EgressDenial } from "../src/egress/egress-proxy.js";
import { createTestSandbox, describeWithDocker } from "./docker-test-environment.js";
import { buildDemoWheel, hostPipWheel, startSimpleIndex } from "./python-packages.js";

const required = (process.env.SBX_REQUIRE ?? "")
  .split(",")
  .map((name) => name.trim())
  .includes("docker");
const pipWheel = hostPipWheel();
if (!pipWheel) {
  if (required)
    throw new Error("SBX_REQUIRE names docker, but /usr/share/python-wheels has no pip wheel (install python3-pip-whl; .ci/provision.sh does)");
  console.warn("\n[sbx] SKIPPING the pip tests: no pip wheel in /usr/share/python-wheels (apt-get install python3-pip-whl)\n");
}
const describePip = (pipWheel ? describeWithDocker : describeWithDocker.skip) as typeof describeWithDocker;

/** pip, run from its wheel (the test image has no pip), quiet about versions, writing into the workspace. */
const PIP = "python3 /workspace/pip.whl/pip --disable-pip-version-check --no-cache-dir --no-input";
const IMPORT_CHECK = "PYTHONPATH=/workspace/site python3 -c 'import sbxdemo; print(sbxdemo.VALUE)'";

describePip("Python dependencies on Docker: pip through the allowlist, and the offline wheelhouse", () => {
  const wheel = buildDemoWheel();
  let index: Awaited<ReturnType<typeof startSimpleIndex>>;
  beforeAll(async () => {
    index = await startSimpleIndex(wheel);
  });
  afterAll(async () => {
    await index?.close();
  });

  async function withPip(sandbox: Sandbox): Promise<void> {
    await sandbox.files.upload(pipWheel!, "/workspace/pip.whl");
  }

  it("pip install from a local index allowed by name, output streamed; a second index host is refused", async () => {
    const denials: EgressDenial[] = [];
    await using sandbox = await createTestSandbox(
      { network: { egress: "deny", allow: [`index.test:${index.port}`] } },
      { egressHosts: { "index.test": "127.0.0.1", "mirror.test": "127.0.0.1" }, onEgressDenied: (denial: EgressDenial) => denials.push(denial) },
    );
    await withPip(sandbox);
    const streamed: string[] = [];
    const installed = await sandbox.commands.run(
      `${PIP} install --target /workspace/site --index-url http://index.test:${index.port}/simple/ --trusted-host index.test sbxdemo`,
      { timeoutMs: 120_000, onStdout: (chunk) => streamed.push(chunk) },
    );
    expect(installed.exitCode).toBe(0);
    expect(streamed.join("")).toContain("Successfully installed sbxdemo-0.1.0");
    expect(index.requests).toEqual(expect.arrayContaining(["/simple/sbxdemo/", `/packages/${wheel.name}`]));
    expect((await sandbox.commands.run(IMPORT_CHECK)).stdout.trim()).toBe("sbx-demo-ok");

    const refused = await sandbox.commands.run(
      `${PIP} install --target /workspace/other --retries 0 --timeout 10 --index-url http://mirror.test:${index.port}/simple/ --trusted-host mirror.test sbxdemo`,
      { timeoutMs: 120_000 },
    );
    expect(refused.exitCode).not.toBe(0);
    expect(refused.stdout + refused.stderr).toMatch(/No matching distribution found for sbxdemo/);
    expect(denials.map((denial) => `${denial.method} ${denial.host}:${denial.port}`)).toContain(`GET mirror.test:${index.port}`);
  }, 180_000);

  it("the offline wheelhouse: files.upload() the wheels, pip install --no-index --find-links under egress deny", async () => {
    await using sandbox = await createTestSandbox({ network: { egress: "deny" } });
    await withPip(sandbox);
    await sandbox.files.write(`/workspace/wheels/${wheel.name}`, wheel.bytes);
    const installed = await sandbox.commands.run(`${PIP} install --no-index --find-links /workspace/wheels --target /workspace/site sbxdemo`, {
      timeoutMs: 120_000,
    });
    expect(installed.stdout).toContain("Successfully installed sbxdemo-0.1.0");
    expect(installed.exitCode).toBe(0);
    expect((await sandbox.commands.run(IMPORT_CHECK)).stdout.trim()).toBe("sbx-demo-ok");
    expect(sandbox.audit().policies.network.applied).toMatchObject({ egress: "deny", networkMode: "none" });
  }, 180_000);
});
