import { execFile } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import { chmod, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { createSandboxProvider as createAppleContainerProvider } from "@sbx/apple-container";
import { CONTAINER_STANDIN_BINARY, removeStandinNamespace } from "@sbx/container-standin";
import { createSandbox, credential, isSbxError, type SandboxProviderV1 } from "@sbx/core";
import { createSandboxProvider as createDockerProvider } from "@sbx/docker";
import { afterAll, beforeAll, describe, expect, it, type TestContext } from "vitest";
import { PLAIN_DOCKER_IMAGE } from "./fixtures/docker-contract.js";
import { checkTokenFromHost, startLoopbackTokenService, type TokenService } from "./fixtures/token-service.js";

/**
 * The founding confirmation list (issue 22), as one test per backend, on Apple's container (through the stand-in CLI)
 * and on Docker:
 * - create a sandbox, mount a git worktree (of a real repository made here), run a process, stream its output, tear down;
 * - each dispatch in a fresh sandbox with a credential issued for it and revoked on teardown (the test's own token
 *   service on loopback refuses it afterwards);
 * - with no runtime, a clear, actionable error.
 * Both need a Docker Engine (the stand-in runs on it); without one they skip with the reason, or fail when SBX_REQUIRE
 * names the backend.
 */
const execute = promisify(execFile);
const namespace = `confirm-${randomBytes(4).toString("hex")}`;
let dockerProblem: string | undefined;
let service: TokenService;
let folder: string;
let repository: string;
let worktree: string;

async function git(args: string[], cwd: string): Promise<string> {
  const { stdout } = await execute("git", ["-c", "user.name=sbx", "-c", "user.email=sbx@localhost", ...args], { cwd });
  return stdout;
}

beforeAll(async () => {
  dockerProblem = await execute("docker", ["info", "--format", "{{.ServerVersion}}"]).then(
    () => undefined,
    (error: unknown) => `docker info failed: ${error instanceof Error ? error.message : String(error)}`,
  );
  service = await startLoopbackTokenService();
  folder = await mkdtemp(join(tmpdir(), "sbx-confirmation-"));
  repository = join(folder, "repository");
  worktree = join(folder, "dispatch-worktree");
  await execute("mkdir", ["-p", repository]);
  await git(["init", "-q", "-b", "main"], repository);
  await writeFile(join(repository, "README.md"), "a real repository\n");
  await git(["add", "README.md"], repository);
  await git(["commit", "-q", "-m", "first"], repository);
  await git(["worktree", "add", "-q", "-b", "dispatch", worktree], repository);
  // The sandbox user (uid 10001) writes into the worktree; the repository's own files stay read-only to it.
  await chmod(worktree, 0o777);
});

afterAll(async () => {
  await service?.close();
  await removeStandinNamespace(namespace).catch(() => undefined);
  if (folder) await rm(folder, { recursive: true, force: true });
});

/** Skips with the reason when there is no Docker Engine, unless SBX_REQUIRE names the backend (then it fails). */
function requireDocker(context: TestContext, backend: string): void {
  if (!dockerProblem) return;
  if ((process.env.SBX_REQUIRE ?? "").split(",").includes(backend)) throw new Error(`${backend}: ${dockerProblem}; SBX_REQUIRE names it`);
  console.warn(`[confirmation list] SKIPPING ${backend}: ${dockerProblem}`);
  context.skip(dockerProblem);
}

/** A credential from the test's token service for one sandbox, recording the issued values (to check them from the host). */
function dispatchCredential(issued: string[]) {
  return credential({
    id: "confirmation-list-token",
    issue: async ({ sandboxId, signal }) => {
      const response = await fetch(`${service.hostUrl}/issue`, { method: "POST", body: sandboxId, signal });
      if (!response.ok) throw new Error(`issue refused: HTTP ${response.status}`);
      const value = await response.text();
      issued.push(value);
      return { value, handle: sandboxId };
    },
    revoke: async ({ sandboxId, handle, signal }) => {
      const response = await fetch(`${service.hostUrl}/revoke`, { method: "POST", body: handle ?? sandboxId, signal });
      if (!response.ok) throw new Error(`revoke refused: HTTP ${response.status}`);
    },
  });
}

async function refusedAfterTeardown(token: string): Promise<number> {
  let status = await checkTokenFromHost(service, token);
  for (let attempt = 0; status !== 401 && attempt < 300; attempt++) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    status = await checkTokenFromHost(service, token);
  }
  return status;
}

/** The dispatch's process: reads the worktree through its `.git` pointer, writes a file, streams lines, hashes the token. */
function dispatchCommand(dispatch: number): string {
  return [
    `cd ${worktree}`,
    'pointer=$(sed -n "s/^gitdir: //p" .git)',
    'printf "head %s\\n" "$(cat "$pointer/HEAD")"',
    `echo "dispatch ${dispatch}" > dispatch-${dispatch}.txt`,
    'for line in 1 2 3; do echo "line $line"; sleep 0.5; done',
    `python3 -c 'import hashlib, os; print("token", hashlib.sha256(os.environ["SERVICE_TOKEN"].encode()).hexdigest())'`,
  ].join("\n");
}

function confirmationTests(backend: string, provider: () => SandboxProviderV1, unavailable: Array<() => Promise<unknown>>): void {
  describe(`confirmation list: ${backend}`, () => {
    it("each dispatch: a fresh sandbox with the worktree mounted, output streamed, a credential revoked on teardown", async (context) => {
      requireDocker(context, backend);
      const sandboxIds: string[] = [];
      for (const dispatch of [1, 2]) {
        const issued: string[] = [];
        const chunks: string[] = [];
        {
          await using sandbox = await createSandbox(provider(), {
            timeoutMs: 300_000,
            mounts: [
              { hostPath: worktree, sandboxPath: worktree, readOnly: false },
              // The worktree's .git pointer names the repository's .git by its host path: share it there, read-only.
              { hostPath: join(repository, ".git"), sandboxPath: join(repository, ".git"), readOnly: true },
            ],
            secrets: { SERVICE_TOKEN: dispatchCredential(issued) },
          });
          sandboxIds.push(sandbox.id);
          const result = await sandbox.commands.run(dispatchCommand(dispatch), { onStdout: (chunk) => chunks.push(chunk) });
          expect(result.exitCode, result.stderr).toBe(0);
          expect(result.stdout).toContain("head ref: refs/heads/dispatch\n");
          expect(result.stdout).toContain("line 1\nline 2\nline 3\n");
          // Streamed: the lines arrived in several chunks while the process ran, not as one at its end.
          expect(chunks.length).toBeGreaterThan(1);
          expect(chunks.join("")).toBe(result.stdout);
          expect(await readFile(join(worktree, `dispatch-${dispatch}.txt`), "utf8")).toBe(`dispatch ${dispatch}\n`);
          expect(issued).toHaveLength(1);
          expect(result.stdout).toContain(`token ${createHash("sha256").update(issued[0]!).digest("hex")}\n`);
          expect(await checkTokenFromHost(service, issued[0]!)).toBe(200);
        }
        expect(await refusedAfterTeardown(issued[0]!)).toBe(401);
      }
      expect(new Set(sandboxIds).size).toBe(2);
    });

    it("with no runtime, a clear error saying what to do", async () => {
      for (const attempt of unavailable) {
        const error = await attempt().then(
          () => undefined,
          (caught: unknown) => caught,
        );
        expect(isSbxError(error, "SBX_BACKEND_UNAVAILABLE"), String(error)).toBe(true);
        expect((error as { remedy: string }).remedy.length).toBeGreaterThan(10);
      }
    });
  });
}

const standinSettings = { image: PLAIN_DOCKER_IMAGE, binary: CONTAINER_STANDIN_BINARY, checkPlatform: false };
confirmationTests(
  "apple-container",
  () => createAppleContainerProvider({ ...standinSettings, environment: { CONTAINER_STANDIN_NAMESPACE: namespace } }),
  [
    // No container CLI installed.
    () => createSandbox(createAppleContainerProvider({ ...standinSettings, binary: "/nonexistent/container" })),
    // The CLI is there, its service is not running (the stand-in's switch): the remedy names `container system start`.
    () =>
      createSandbox(createAppleContainerProvider({ ...standinSettings, environment: { CONTAINER_STANDIN_SERVICE: "not-running" } })).catch(
        (error: unknown) => {
          expect((error as { remedy?: string }).remedy).toContain("container system start");
          throw error;
        },
      ),
    // Not a Mac with Apple silicon and macOS 26 (this Linux machine): the real platform check.
    ...(process.platform === "darwin"
      ? []
      : [() => createSandbox(createAppleContainerProvider({ image: PLAIN_DOCKER_IMAGE, binary: CONTAINER_STANDIN_BINARY }))]),
  ],
);
confirmationTests("docker", () => createDockerProvider({ image: PLAIN_DOCKER_IMAGE }), [
  () =>
    createSandbox(
      createDockerProvider({ image: PLAIN_DOCKER_IMAGE, socketPath: join(tmpdir(), `no-docker-${randomBytes(4).toString("hex")}.sock`) }),
    ),
]);
