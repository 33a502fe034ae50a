import { createSandbox, isSbxError, type Sandbox } from "@sbx/core";
import { startE2BEmulator } from "@sbx/e2b-emulator";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { shareEmulator } from "@sbx/emulator-kit/testing";
import { createSandboxProvider } from "../src/index.js";

/**
 * envd does every file operation as root and follows symlinks (the emulator now does the same), so a symlink
 * planted by sandboxed code must not lead sbx's files API outside the workspace. Each test plants the link as
 * the sandbox user, then performs the attack through the public API.
 */
let sandbox: Sandbox | undefined;
const shared = shareEmulator({ start: () => startE2BEmulator({}), backend: "e2b", label: "@sbx/e2b symlink confinement tests" });

beforeAll(async () => {
  if (!shared.emulator) return;
  sandbox = await createSandbox(createSandboxProvider(shared.emulator.connectionOptions));
  await sandbox.commands.run(
    "ln -s /etc etc-dir && ln -s /etc/shadow shadow-link && mkdir -p data && echo inside > data/file.txt && ln -s data data-link && ln -s data/file.txt file-link",
  );
});
afterAll(async () => {
  await sandbox?.kill();
});

async function refusedAsEscape(operation: Promise<unknown>): Promise<void> {
  const outcome = await operation.then(
    (value) => ({ resolved: value }),
    (error: unknown) => error,
  );
  expect(isSbxError(outcome, "SBX_PATH")).toBe(true);
  expect(outcome).toMatchObject({ name: "PathError", reason: "escapes-workspace" });
  // Reads and writes: the adapter's envd confinement; the other operations: core's POSIX scripts (ADR 0023).
  expect((outcome as Error).message).toMatch(/(symlink|symbolic link).* lead(s|ing) outside the workspace/);
}

async function rootSees(test: string): Promise<string> {
  return (await sandbox!.commands.run(`${test} && echo yes || echo no`)).stdout.trim();
}

describe("E2B files API against symlinks planted by sandboxed code (envd works as root)", () => {
  it("a read through a symlinked directory or a symlink to a root-only file is refused, not served as root", async (context) => {
    if (!sandbox) return context.skip(`E2B emulator unavailable: ${shared.unavailable}`);
    await refusedAsEscape(sandbox.files.read("etc-dir/shadow"));
    await refusedAsEscape(sandbox.files.read("shadow-link", { format: "bytes" }));
    await refusedAsEscape(sandbox.files.read("etc-dir/hostname", { format: "stream" }));
  });

  it("writes, makeDir, remove and rename through a symlinked directory are refused and change nothing outside", async (context) => {
    if (!sandbox) return context.skip(`E2B emulator unavailable: ${shared.unavailable}`);
    await refusedAsEscape(sandbox.files.write("etc-dir/sbx-planted", "owned"));
    await refusedAsEscape(sandbox.files.mkdir("etc-dir/sbx-planted-dir/inner"));
    await refusedAsEscape(sandbox.files.remove("etc-dir/hostname"));
    await refusedAsEscape(sandbox.files.rename("etc-dir/hostname", "stolen-hostname"));
    await refusedAsEscape(sandbox.files.rename("data/file.txt", "etc-dir/moved"));
    expect(await rootSees("test -e /etc/sbx-planted -o -e /etc/sbx-planted-dir -o -e /etc/moved")).toBe("no");
    expect(await rootSees("test -e /etc/hostname")).toBe("yes");
    expect(await rootSees("test -e data/file.txt")).toBe("yes");
  });

  it("listing or stating through a symlinked directory is refused", async (context) => {
    if (!sandbox) return context.skip(`E2B emulator unavailable: ${shared.unavailable}`);
    await refusedAsEscape(sandbox.files.list("etc-dir"));
    await refusedAsEscape(sandbox.files.stat("etc-dir/passwd"));
  });

  it("symlinks that stay inside the workspace keep working, and are reported as symlinks", async (context) => {
    if (!sandbox) return context.skip(`E2B emulator unavailable: ${shared.unavailable}`);
    expect(await sandbox.files.read("file-link")).toBe("inside\n");
    expect(await sandbox.files.read("data-link/file.txt")).toBe("inside\n");
    expect((await sandbox.files.list("data-link")).map((entry) => entry.name)).toEqual(["file.txt"]);
    expect(await sandbox.files.stat("file-link")).toMatchObject({ name: "file-link", type: "symlink" });
    await sandbox.files.write("data-link/written.txt", "through an inside link");
    expect(await sandbox.files.read("data/written.txt")).toBe("through an inside link");
  });
});
