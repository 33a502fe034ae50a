/**
 * Wire-level behaviour the SDK relies on, checked with a raw gRPC client built from the SDK's own definitions:
 * stdin offsets de-duplicated (the client retries writes), TaskExecStart idempotent by exec id, long polls that block
 * for their timeout, and the network plan each policy gets (no network, or iptables rules for CIDRs; domains are
 * recorded, not enforced).
 */
import { randomUUID } from "node:crypto";
import { createChannel, createClient, Metadata } from "nice-grpc";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startModalEmulator, type ModalEmulator } from "../src/index.js";
import { loadModalDefinitions } from "../src/modal-definitions.js";
import { skipDockerTests, testImage } from "./docker-availability.js";

let emulator: ModalEmulator;
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- the emulator's gRPC handlers, called with untyped messages
let control: any;
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- as above
let router: any;
let metadata: Metadata;
let routerMetadata: Metadata;
let appId: string;
let imageId: string;

beforeAll(async () => {
  if (skipDockerTests) return;
  emulator = await startModalEmulator({ image: testImage });
  const definitions = loadModalDefinitions();
  const channel = createChannel(emulator.serverUrl);
  control = createClient(definitions.controlPlane as never, channel);
  router = createClient(definitions.taskCommandRouter as never, channel);
  metadata = new Metadata({ "x-modal-token-id": emulator.tokenId, "x-modal-token-secret": emulator.tokenSecret });
  const { token } = await control.authTokenGet({}, { metadata });
  metadata.set("x-modal-auth-token", token);
  appId = (await control.appGetOrCreate({ appName: "wire", objectCreationType: 1 }, { metadata })).appId;
  imageId = (await control.imageGetOrCreate({ image: { dockerfileCommands: ["FROM python:3.12-slim"] }, appId }, { metadata })).imageId;
});
afterAll(async () => {
  await emulator?.stop();
});

async function createSandbox(networkAccess: Record<string, unknown> = { networkAccessType: 2 }) {
  const response = await control.sandboxCreateV2({ appId, definition: { imageId, timeoutSecs: 120, networkAccess, resources: {} } }, { metadata });
  routerMetadata = new Metadata({ authorization: `Bearer ${response.commandRouterAccess.jwt}` });
  expect(response.commandRouterAccess.url).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
  return response as { sandboxId: string; taskId: string };
}

async function readAll(taskId: string, execId: string, fileDescriptor = 0): Promise<string> {
  let text = "";
  for await (const message of router.taskExecStdioRead({ taskId, execId, offset: 0, fileDescriptor }, { metadata: routerMetadata }))
    text += Buffer.from(message.data).toString();
  return text;
}

describe.skipIf(skipDockerTests)("modal emulator wire behaviour", () => {
  it("stdin writes are de-duplicated by offset: a retried write is not applied twice", async () => {
    const { sandboxId, taskId } = await createSandbox();
    const execId = randomUUID();
    await router.taskExecStart({ taskId, execId, commandArgs: ["cat"], stdoutConfig: 1, stderrConfig: 1 }, { metadata: routerMetadata });
    const write = (offset: number, text: string, eof = false) =>
      router.taskExecStdinWrite({ taskId, execId, offset, data: Buffer.from(text), eof }, { metadata: routerMetadata });
    await write(0, "abc");
    await write(0, "abc");
    await write(2, "cdef");
    await write(6, "", true);
    expect(await readAll(taskId, execId)).toBe("abcdef");
    expect(await router.taskExecWait({ taskId, execId }, { metadata: routerMetadata })).toEqual({ code: 0 });
    expect(await router.taskExecStdinStatus({ taskId, execId }, { metadata: routerMetadata })).toEqual({ numBytesWritten: 6, closed: true });
    await control.sandboxTerminateV2({ sandboxId }, { metadata });
  });

  it("TaskExecStart is idempotent by exec id: a retried start does not run the command twice", async () => {
    const { sandboxId, taskId } = await createSandbox();
    const execId = randomUUID();
    const start = { taskId, execId, commandArgs: ["sh", "-c", "echo ran >> /tmp/runs"], stdoutConfig: 1, stderrConfig: 1 };
    await router.taskExecStart(start, { metadata: routerMetadata });
    await router.taskExecStart(start, { metadata: routerMetadata });
    await router.taskExecWait({ taskId, execId }, { metadata: routerMetadata });
    const check = randomUUID();
    await router.taskExecStart(
      { taskId, execId: check, commandArgs: ["cat", "/tmp/runs"], stdoutConfig: 1, stderrConfig: 1 },
      { metadata: routerMetadata },
    );
    expect(await readAll(taskId, check)).toBe("ran\n");
    await control.sandboxTerminateV2({ sandboxId }, { metadata });
  });

  it("SandboxWaitV2 blocks for its timeout while the sandbox runs, answers at once with timeout 0, and returns the result after terminate", async () => {
    const { sandboxId, taskId } = await createSandbox();
    const started = Date.now();
    const pending = await control.sandboxWaitV2({ sandboxId, timeout: 1 }, { metadata });
    expect(pending.result).toBeUndefined();
    expect(Date.now() - started).toBeGreaterThanOrEqual(900);
    expect((await control.sandboxWaitV2({ sandboxId, timeout: 0 }, { metadata })).result).toBeUndefined();
    const waiting = control.sandboxWaitV2({ sandboxId, timeout: 30 }, { metadata });
    const execId = randomUUID();
    await router.taskExecStart({ taskId, execId, commandArgs: ["sleep", "60"], stdoutConfig: 1, stderrConfig: 1 }, { metadata: routerMetadata });
    const execWait = router.taskExecWait({ taskId, execId }, { metadata: routerMetadata });
    await control.sandboxTerminateV2({ sandboxId }, { metadata });
    expect((await waiting).result).toMatchObject({ status: 3 });
    expect(await execWait).toEqual({ code: 137 });
    expect((await control.sandboxTerminateV2({ sandboxId }, { metadata })).existingResult).toMatchObject({ status: 3 });
  });

  it("network policies: BLOCKED has no network; ALLOWLIST installs iptables rules for IPv4 CIDRs and records domains as not enforced", async () => {
    const blocked = await createSandbox({ networkAccessType: 2 });
    const blockedReport = emulator.inspectSandbox(blocked.sandboxId)!;
    expect(blockedReport.network).toMatchObject({ mode: "none", type: "BLOCKED" });
    expect(blockedReport.containerAddress).toBeNull();
    const execId = randomUUID();
    await router.taskExecStart(
      {
        taskId: blocked.taskId,
        execId,
        commandArgs: ["python3", "-c", "import socket; s=socket.socket(); s.settimeout(2); print(s.connect_ex(('1.1.1.1', 80)) != 0)"],
        stdoutConfig: 1,
        stderrConfig: 1,
      },
      { metadata: routerMetadata },
    );
    expect(await readAll(blocked.taskId, execId)).toBe("True\n");
    const allowlisted = await createSandbox({ networkAccessType: 3, allowedCidrs: ["10.99.0.0/16"], allowedDomains: ["pypi.org"] });
    const report = emulator.inspectSandbox(allowlisted.sandboxId)!;
    expect(report.network).toMatchObject({ mode: "network", type: "ALLOWLIST", enforcedCidrs: ["10.99.0.0/16"] });
    expect(report.network.notEnforced.map((entry) => entry.entry)).toEqual(["pypi.org"]);
    expect(report.firewallRules.some((rule) => rule.includes("-d 10.99.0.0/16") && rule.includes("ACCEPT"))).toBe(true);
    expect(report.firewallRules.some((rule) => rule.includes(`-s ${report.containerAddress}/32`) && rule.includes("REJECT"))).toBe(true);
    await control.sandboxTerminateV2({ sandboxId: blocked.sandboxId }, { metadata });
    await control.sandboxTerminateV2({ sandboxId: allowlisted.sandboxId }, { metadata });
    expect(emulator.inspectSandbox(allowlisted.sandboxId)!.result).toMatchObject({ status: 3 });
  });
});
