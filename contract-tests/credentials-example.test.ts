import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtemp, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createSandbox, revokeOrphanedCredentials, type CreateSandboxOptions, type SandboxProviderV1 } from "@sbx/core";
import { createSandboxProvider as createDockerProvider } from "@sbx/docker";
import { createSandboxProvider as createFakeProvider } from "@sbx/fake";
// @ts-ignore -- contract-tests has no @types/dockerode; only getContainer().remove() is used.
import DockerClient from "dockerode";
import { afterAll, beforeAll, describe, expect, it, vi, type TestContext } from "vitest";
import { callServiceCommand, credentialsExample, tokenServiceCredential } from "../docs/examples/credentials-token-service.js";
import { createFixtureDocker } from "./fixtures/server-containers.js";
import { checkTokenFromHost, startContainerTokenService, startLoopbackTokenService, type TokenService } from "./fixtures/token-service.js";

/**
 * docs/credentials.md's example, run for real: a per-sandbox token from a local token service works inside the
 * sandbox and is refused once the sandbox ends, by kill(), by lifetime expiry, and (Docker) after the owning host
 * process is SIGKILLed and the next process runs the orphan revocation.
 */

let stateDirectory: string;
const previousStateDirectory = process.env.SBX_STATE_DIR;

beforeAll(async () => {
  stateDirectory = await mkdtemp(join(tmpdir(), "sbx-credentials-example-"));
  process.env.SBX_STATE_DIR = stateDirectory;
});

afterAll(async () => {
  if (previousStateDirectory === undefined) delete process.env.SBX_STATE_DIR;
  else process.env.SBX_STATE_DIR = previousStateDirectory;
  await rm(stateDirectory, { recursive: true, force: true });
});

/** Polls the service from the host until `token` gets `status`, up to `limitMs` (bounds a hung test; never asserts speed). */
async function waitForStatus(service: TokenService, token: string, status: number, limitMs: number): Promise<number> {
  const started = Date.now();
  let last = await checkTokenFromHost(service, token);
  while (last !== status && Date.now() - started < limitMs) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    last = await checkTokenFromHost(service, token);
  }
  return last;
}

/** The tests every backend runs: the documented example (kill) and lifetime expiry. */
function exampleTests(
  setup: () => { provider: SandboxProviderV1; service: TokenService; createOptions: CreateSandboxOptions },
  skipUnless: (context: TestContext) => Promise<void>,
): void {
  it("the token works inside the sandbox and is refused after kill() (the documented example)", async (context) => {
    await skipUnless(context);
    const { provider, service, createOptions } = setup();
    const printed: unknown[] = [];
    const log = vi.spyOn(console, "log").mockImplementation((value: unknown) => void printed.push(value));
    let outcome;
    try {
      outcome = await credentialsExample({
        target: provider,
        serviceUrlFromHost: service.hostUrl,
        serviceUrlFromSandbox: service.sandboxUrl,
        createOptions,
      });
    } finally {
      log.mockRestore();
    }
    expect(outcome.statusInside).toBe("200");
    expect(outcome.token).toMatch(/^tok_[0-9a-f]{32}$/);
    expect(printed[1]).toEqual([expect.objectContaining({ name: "SERVICE_TOKEN", source: "example-token-service", outcome: "active" })]);
    expect(JSON.stringify(printed)).not.toContain(outcome.token);
    expect(await checkTokenFromHost(service, outcome.token)).toBe(401);
  });

  it("the token is refused once the sandbox's lifetime ends, without kill()", async (context) => {
    await skipUnless(context);
    const { provider, service, createOptions } = setup();
    const sandbox = await createSandbox(provider, {
      ...createOptions,
      network: { egress: "allow" },
      timeoutMs: 8_000, // long enough for the two commands before it ends on a loaded machine (2 s was not, in CI)
      secrets: { SERVICE_TOKEN: tokenServiceCredential(service.hostUrl) },
    });
    try {
      const inside = await sandbox.commands.run(callServiceCommand(`${service.sandboxUrl}/check`));
      expect(inside.stdout.trim()).toBe("200");
      const token = (await sandbox.commands.run(`printf '%s' "$SERVICE_TOKEN"`)).stdout;
      expect(await checkTokenFromHost(service, token)).toBe(200);
      expect(await waitForStatus(service, token, 401, 30_000)).toBe(401);
      expect(sandbox.audit().credentials![0]).toMatchObject({ outcome: "revoked", endReason: "lifetime" });
    } finally {
      await sandbox.kill();
    }
  });
}

describe("credentials example on the fake (token service on loopback)", () => {
  let service: TokenService;
  beforeAll(async () => {
    service = await startLoopbackTokenService();
  });
  afterAll(async () => {
    await service?.close();
  });
  exampleTests(
    () => ({ provider: createFakeProvider(), service, createOptions: {} }),
    async () => {},
  );
});

describe("credentials example on Docker (token service container on a network the test creates)", () => {
  const image = process.env.SBX_DOCKER_IMAGE ?? "sbx-test/python:3.11";
  const provider = createDockerProvider({ image });
  const docker = createFixtureDocker();
  const networkName = `sbx-credentials-${randomBytes(4).toString("hex")}`;
  let usable = false;
  let reason = "";
  let service: TokenService | undefined;

  beforeAll(async () => {
    const status = await provider.detect();
    usable = status.usable;
    reason = status.reason;
    if (!usable) return;
    await docker.createNetwork({ Name: networkName, Driver: "bridge", Labels: { "sbx.test": "1" } });
    service = await startContainerTokenService({ image, networkName, docker });
  });

  afterAll(async () => {
    await service?.close();
    if (usable)
      await docker
        .getNetwork(networkName)
        .remove()
        .catch(() => {});
  });

  const skipUnlessDocker = async (context: TestContext) => {
    if (usable) return;
    if ((process.env.SBX_REQUIRE ?? "").split(",").includes("docker")) throw new Error(`Docker is required (SBX_REQUIRE) but not usable: ${reason}`);
    context.skip(`Docker is not usable here: ${reason}`);
  };

  exampleTests(() => ({ provider, service: service!, createOptions: { settings: { bridgeNetwork: networkName } } }), skipUnlessDocker);

  it("after the owning host process is SIGKILLed, the token stays live until the next process revokes the orphan", async (context) => {
    await skipUnlessDocker(context);
    const tokenService = service!;
    // The child is a separate host process: it creates a sandbox with the same credential source (same id) and is killed.
    const childScript = `
      import { createSandbox, credential } from "@sbx/core";
      import { createSandboxProvider } from "@sbx/docker";
      const url = process.env.SERVICE_URL;
      const source = credential({
        id: "example-token-service",
        issue: async ({ sandboxId, signal }) => ({ value: await (await fetch(url + "/issue", { method: "POST", body: sandboxId, signal })).text(), handle: sandboxId }),
        revoke: async ({ sandboxId, handle, signal }) => void (await fetch(url + "/revoke", { method: "POST", body: handle ?? sandboxId, signal })),
      });
      const sandbox = await createSandbox(createSandboxProvider({ image: process.env.IMAGE }), {
        network: { egress: "allow" }, settings: { bridgeNetwork: process.env.NETWORK }, timeoutMs: 120000, secrets: { SERVICE_TOKEN: source },
      });
      const status = (await sandbox.commands.run(process.env.CHECK)).stdout.trim();
      const token = (await sandbox.commands.run("printf '%s' \\"$SERVICE_TOKEN\\"")).stdout;
      process.stdout.write(JSON.stringify({ sandboxId: sandbox.id, status, token }) + "\\n");
      setInterval(() => {}, 1000);
    `;
    const child = spawn(process.execPath, ["--input-type=module", "-e", childScript], {
      cwd: new URL(".", import.meta.url),
      env: {
        ...process.env,
        SBX_STATE_DIR: stateDirectory,
        SERVICE_URL: tokenService.hostUrl,
        IMAGE: image,
        NETWORK: networkName,
        CHECK: callServiceCommand(`${tokenService.sandboxUrl}/check`),
      },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let output = "";
    let errors = "";
    child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on("data", (chunk: Buffer) => (errors += chunk.toString()));
    const exited = new Promise<NodeJS.Signals | null>((resolve) => child.on("exit", (_code, signal) => resolve(signal)));
    let sandboxId = "";
    try {
      for (let waited = 0; !output.includes("\n") && child.exitCode === null && waited < 600; waited++)
        await new Promise((resolve) => setTimeout(resolve, 100));
      expect(errors).toBe("");
      const reported = JSON.parse(output) as { sandboxId: string; status: string; token: string };
      sandboxId = reported.sandboxId;
      expect(reported.status).toBe("200");

      child.kill("SIGKILL");
      expect(await exited).toBe("SIGKILL");
      // The owner died without revoking: the token is still live, and its durable record is on disk.
      expect(await checkTokenFromHost(tokenService, reported.token)).toBe(200);
      expect((await readdir(join(stateDirectory, "credentials"))).filter((name) => name.endsWith(".json"))).toHaveLength(1);

      const result = await revokeOrphanedCredentials({ sources: [tokenServiceCredential(tokenService.hostUrl)] });
      expect(result.revoked).toEqual([
        { name: "SERVICE_TOKEN", sourceId: "example-token-service", sandboxId, ownerPid: child.pid, attempts: 1, error: null },
      ]);
      expect(result.failed).toEqual([]);
      expect(await checkTokenFromHost(tokenService, reported.token)).toBe(401);
      expect((await readdir(join(stateDirectory, "credentials"))).filter((name) => name.endsWith(".json"))).toEqual([]);
    } finally {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
      // The crashed host's container (ours) is removed here; ending it by itself is the reaper's job (issue 7).
      if (sandboxId)
        await new DockerClient()
          .getContainer(sandboxId)
          .remove({ force: true })
          .catch(() => {});
    }
  });
});
