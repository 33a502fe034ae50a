/**
 * Get-or-create by name on Docker (ADR 0050) when two processes race: exactly one creates, both hold the same
 * container; and listing by labels sees it with its name. The in-process race is in the contract suite.
 */
import { execFile } from "node:child_process";
import { randomUUID } from "node:crypto";
import { promisify } from "node:util";
import { connectSandbox, getOrCreateSandbox, isSbxError, listSandboxes } from "@sbx/core";
import { expect, it } from "vitest";
import { createSandboxProvider } from "../src/index.js";
import { describeWithDocker, docker, TEST_IMAGE } from "./docker-test-environment.js";

const run = promisify(execFile);
const packageDirectory = new URL("..", import.meta.url).pathname;

/** A separate node process calling getOrCreateSandbox for `name`; it prints `{ id, created }` and exits (the sandbox outlives it). */
async function getOrCreateInAnotherProcess(name: string, marker: string): Promise<{ id: string; created: boolean }> {
  const script = `
    import { getOrCreateSandbox } from "@sbx/core";
    import { createSandboxProvider } from "./dist/index.js";
    const provider = createSandboxProvider({ image: ${JSON.stringify(TEST_IMAGE)}, keepAfterHostExit: true });
    const { sandbox, created } = await getOrCreateSandbox(provider, { name: ${JSON.stringify(name)}, timeoutMs: 120000, metadata: { "named-test": ${JSON.stringify(marker)} } });
    const echoed = await sandbox.commands.run("echo ready");
    process.stdout.write(JSON.stringify({ id: sandbox.id, created, echoed: echoed.stdout }));
  `;
  const { stdout } = await run(process.execPath, ["--input-type=module", "-e", script], { cwd: packageDirectory, timeout: 150_000 });
  const parsed = JSON.parse(stdout) as { id: string; created: boolean; echoed: string };
  expect(parsed.echoed).toBe("ready\n");
  return parsed;
}

describeWithDocker("named sandboxes on Docker", () => {
  it(
    "two processes racing for one name: exactly one creates, both get the same container, and the listing shows its name",
    { timeout: 200_000 },
    async () => {
      const name = `named-${randomUUID().slice(0, 12)}`;
      const marker = randomUUID();
      const provider = createSandboxProvider({ image: TEST_IMAGE });
      const results = await Promise.all([getOrCreateInAnotherProcess(name, marker), getOrCreateInAnotherProcess(name, marker)]);
      try {
        expect(results.filter((result) => result.created).length).toBe(1);
        expect(results[0]!.id).toBe(results[1]!.id);
        const listed = await listSandboxes(provider, { labels: { "named-test": marker } });
        expect(listed.map((entry) => [entry.id, entry.name, entry.state])).toEqual([[results[0]!.id, name, "running"]]);
        // A third caller, here, attaches to it rather than creating.
        const third = await getOrCreateSandbox(provider, { name, timeoutMs: 120_000, metadata: { "named-test": marker } });
        expect(third.created).toBe(false);
        expect(third.sandbox.id).toBe(results[0]!.id);
        // A caller asking for another policy under the same name is refused, never handed this sandbox.
        const refused = await getOrCreateSandbox(provider, { name, network: { egress: "allow" } }).catch((error: unknown) => error);
        expect(isSbxError(refused, "SBX_POLICY_NOT_ENFORCED")).toBe(true);
      } finally {
        const attached = await connectSandbox(provider, results[0]!.id).catch(() => undefined);
        await attached?.kill();
        await docker
          .getContainer(results[0]!.id)
          .remove({ force: true })
          .catch(() => {});
      }
    },
  );
});
