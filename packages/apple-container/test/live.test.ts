import { execFileSync } from "node:child_process";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createSandbox } from "@sbx/core";
import { describe, expect, it } from "vitest";
import { createSandboxProvider } from "../src/index.js";
import { findBinary, platformProblem } from "../src/container-detection.js";

/**
 * Live tests against Apple's real `container` (they create real VMs). They run only on macOS 26+ on Apple silicon with
 * `container` installed and its service running, and say why they skip everywhere else (Linux CI runs the contract
 * suite through the stand-in instead). The image is `SBX_APPLE_CONTAINER_IMAGE` (default python:3.12-slim, pulled by
 * the CLI on first use). Run: `npx vitest run test/live.test.ts` from packages/apple-container on the Mac. The
 * network test starts its own server on the Mac's loopback and sends nothing anywhere else.
 */
function liveSkipReason(): string | undefined {
  const problem = platformProblem();
  if (problem) return problem;
  const binary = findBinary(undefined);
  if (!binary) return "the container CLI is not installed (container on PATH or /usr/local/bin/container)";
  try {
    execFileSync(binary, ["system", "status"], { stdio: "ignore", timeout: 15_000 });
  } catch {
    return "the container system service is not running (run `container system start`)";
  }
  return undefined;
}

const skipReason = liveSkipReason();
if (skipReason) console.warn(`[@sbx/apple-container] SKIPPING live tests against Apple's container: ${skipReason.replace(/\.$/, "")}.`);
const image = process.env.SBX_APPLE_CONTAINER_IMAGE ?? "docker.io/library/python:3.12-slim";

describe.skipIf(skipReason !== undefined)(
  `@sbx/apple-container live against Apple's container${skipReason ? ` (skipped: ${skipReason})` : ""}`,
  () => {
    const provider = createSandboxProvider({ image });

    it("runs commands with exact bytes and exit codes, files, and code with results, in a VM", async () => {
      await using sandbox = await createSandbox(provider, { timeoutMs: 300_000 });
      const result = await sandbox.commands.run("printf 'ok\\377'; exit 3");
      expect(result.exitCode).toBe(3);
      expect([...result.stdoutBytes]).toEqual([0x6f, 0x6b, 0xff]);
      await sandbox.files.write("live.txt", "hello");
      expect(await sandbox.files.read("live.txt")).toBe("hello");
      const execution = await sandbox.runCode("1+1");
      expect(execution.results?.find((item) => item.isMainResult)?.data["text/plain"]).toBe("2");
      expect(sandbox.audit().backendVersion).toMatch(/^Apple container 1\.[0-4]\./);
    }, 600_000);

    it("deny has no network interface but loopback; limits and a read-only mount are enforced inside the VM", async () => {
      const folder = await mkdtemp(join(tmpdir(), "sbx-apple-live-"));
      try {
        await writeFile(join(folder, "hello.txt"), "from the Mac");
        await using sandbox = await createSandbox(provider, {
          timeoutMs: 300_000,
          limits: { cpus: 1, memoryMiB: 512 },
          mounts: [{ hostPath: folder, sandboxPath: "/mnt/live", readOnly: true }],
        });
        const interfaces = await sandbox.commands.run("ls /sys/class/net");
        expect(interfaces.stdout.trim()).toBe("lo");
        expect((await sandbox.commands.run("cat /sys/fs/cgroup/memory.max")).stdout.trim()).toBe(String(512 * 1024 * 1024));
        expect((await sandbox.commands.run("cat /mnt/live/hello.txt")).stdout).toBe("from the Mac");
        expect((await sandbox.commands.run("echo changed > /mnt/live/hello.txt")).exitCode).not.toBe(0);
        expect(await readFile(join(folder, "hello.txt"), "utf8")).toBe("from the Mac");
      } finally {
        await rm(folder, { recursive: true, force: true });
      }
    }, 600_000);

    it("kills a command and what it started (the CLI forwards no signal: the kill goes through the VM)", async () => {
      await using sandbox = await createSandbox(provider, { timeoutMs: 300_000 });
      const outcome = await sandbox.commands.run("setsid sh -c 'sleep 300' & sleep 300", { timeoutMs: 3_000 }).catch((error: unknown) => error);
      expect((outcome as { code?: string }).code).toBe("SBX_TIMEOUT");
      expect((outcome as { killed?: boolean }).killed).toBe(true);
      expect((await sandbox.commands.run("cat /proc/[0-9]*/comm 2>/dev/null | grep -c '^sleep$' || true")).stdout.trim()).toBe("0");
    }, 600_000);
  },
);
