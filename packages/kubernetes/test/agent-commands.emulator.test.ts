/**
 * Commands through the sbx agent over one `pods/exec` stream (ADR 0051), through the kube emulator: after the agent's
 * start a command costs no exec upgrade; a hostile command that forks, calls `setsid` and double-forks is killed and
 * the kill verified (nothing of it left, measured from inside the Pod by a separate exec); stdin can be closed on an
 * API server that speaks only v4 (the agent closes it, not the exec); the wait for a new Pod lists, watches, and lists
 * again after a forced 410 Expired.
 */
import { CoreV1Api, KubeConfig, Watch } from "@kubernetes/client-node";
import { createSandbox, type Sandbox } from "@sbx/core";
import { shareEmulator } from "@sbx/emulator-kit/testing";
import { startKubeEmulator } from "@sbx/kube-emulator";
import { describe, expect, it } from "vitest";
import { createSandboxProvider, objectNameOf } from "../src/index.js";
import { buildSandboxPod, SANDBOX_ID_LABEL } from "../src/kubernetes-manifests.js";
import { waitForPodRunning } from "../src/pod-startup.js";

const image = process.env.SBX_KUBE_EMULATOR_IMAGE ?? "sbx-test/python:3.11";
const shared = shareEmulator({ start: () => startKubeEmulator({ image }), backend: "k8s", label: "kubernetes agent commands" });

function provider(settings: Record<string, unknown> = {}) {
  return createSandboxProvider({ kubeconfig: shared.emulator!.kubeconfig, defaultImage: image, ...settings });
}

/** Live processes (not zombies) whose command line contains `marker`, read from /proc by a plain command. */
async function processesWith(sandbox: Sandbox, marker: string): Promise<string[]> {
  const script = [
    "import os, sys",
    "for pid in filter(str.isdigit, os.listdir('/proc')):",
    "    try:",
    "        line = open('/proc/%s/cmdline' % pid, 'rb').read().replace(b'\\0', b' ').decode()",
    "        state = open('/proc/%s/stat' % pid).read().rsplit(')', 1)[1].split()[0]",
    "    except OSError:",
    "        continue",
    "    if sys.argv[1] in line and state != 'Z' and 'python3' not in line: print(pid, line)",
  ].join("\n");
  const result = await sandbox.commands.run(`python3 -c "$SCRIPT" ${JSON.stringify(marker)}`, { env: { SCRIPT: script } });
  return result.stdout.split("\n").filter((line) => line.length > 0);
}

/** Runs commands until one runs under the agent (python3 its parent): the first command started it in the background. */
async function untilThroughAgent(sandbox: Sandbox): Promise<string> {
  let parent = "";
  await expect
    .poll(
      async () => {
        const result = await sandbox.commands.run("echo $PPID; cat /proc/$PPID/comm 2>/dev/null || echo none");
        const [id = "", name = ""] = result.stdout.trim().split("\n");
        parent = id;
        return name;
      },
      { timeout: 30_000, interval: 100 },
    )
    .toBe("python3");
  return parent;
}

describe("kubernetes commands through the sbx agent (kube emulator)", () => {
  it("runs commands through the agent with no exec upgrade each, and stays there", async (context) => {
    if (!shared.emulator) return context.skip(shared.unavailable);
    await using sandbox = await createSandbox(provider(), { limits: { cpus: 0.5, memoryMiB: 128 } });
    const first = await sandbox.commands.run("echo $PPID; cat /proc/$PPID/comm");
    // The first command started the agent and ran through it.
    expect(first.stdout).toMatch(/^[1-9]\d*\npython3\n$/);
    const agentProcess = first.stdout.split("\n")[0]!;
    const before = shared.emulator.execCount;
    for (let index = 0; index < 10; index++) {
      const result = await sandbox.commands.run(`echo ${index}; echo $PPID`);
      expect(result.stdout).toBe(`${index}\n${agentProcess}\n`);
    }
    expect(shared.emulator.execCount - before).toBe(0);
  });

  it("with agentCommands background, the first command runs as one exec and starts the agent; later ones take it", async (context) => {
    if (!shared.emulator) return context.skip(shared.unavailable);
    await using sandbox = await createSandbox(provider({ agentCommands: "background" }), { limits: { cpus: 0.5, memoryMiB: 128 } });
    const first = await sandbox.commands.run("echo $PPID");
    // Its parent is outside the Pod's pid namespace: an exec, not the agent.
    expect(first.stdout).toBe("0\n");
    await untilThroughAgent(sandbox);
    const before = shared.emulator.execCount;
    expect((await sandbox.commands.run("echo through")).stdout).toBe("through\n");
    expect(shared.emulator.execCount - before).toBe(0);
  });

  it("kills a command that forks, calls setsid and double-forks, verified from inside", async (context) => {
    if (!shared.emulator) return context.skip(shared.unavailable);
    await using sandbox = await createSandbox(provider(), { limits: { cpus: 0.5, memoryMiB: 128 } });
    await untilThroughAgent(sandbox);
    const hostile = [
      "sleep 3001 &",
      "setsid sh -c 'sleep 3002 & exec sleep 3003' &",
      "( ( setsid sleep 3004 & ) & ) ;",
      "sh -c 'trap \"\" TERM HUP INT; sleep 3005' &",
      "echo started; exec sleep 3006",
    ].join("\n");
    const handle = await sandbox.commands.start(hostile);
    // Six sleepers, and the shell that ignores TERM waiting on one of them.
    await expect.poll(async () => (await processesWith(sandbox, "sleep 300")).length, { timeout: 20_000, interval: 200 }).toBe(7);
    await handle.kill();
    const result = await handle.wait();
    expect(result.exitCode).toBe(137);
    expect(await processesWith(sandbox, "sleep 300")).toEqual([]);
    // The agent survived its command's kill: the next command still takes it.
    expect((await sandbox.commands.run("echo alive")).stdout).toBe("alive\n");
  });

  it("kills on timeout through the agent and reports it", async (context) => {
    if (!shared.emulator) return context.skip(shared.unavailable);
    await using sandbox = await createSandbox(provider(), { limits: { cpus: 0.5, memoryMiB: 128 } });
    await untilThroughAgent(sandbox);
    const error = await sandbox.commands.run("setsid sleep 3101 & sleep 3102", { timeoutMs: 1_500 }).then(
      () => undefined,
      (caught: unknown) => caught as { code?: string },
    );
    expect(error?.code).toBe("SBX_TIMEOUT");
    expect(await processesWith(sandbox, "sleep 310")).toEqual([]);
  });

  it("closes a command's stdin on an API server that speaks only v4 (the agent closes it)", async (context) => {
    if (!shared.emulator) return context.skip(shared.unavailable);
    shared.emulator.setModes({ execProtocols: "v4" });
    try {
      await using sandbox = await createSandbox(provider(), { limits: { cpus: 0.5, memoryMiB: 128 } });
      await untilThroughAgent(sandbox);
      const handle = await sandbox.commands.start("wc -c", { stdin: true });
      await handle.writeStdin("twelve bytes");
      await handle.closeStdin();
      const result = await handle.wait();
      expect(result.stdout.trim()).toBe("12");
    } finally {
      shared.emulator.setModes({ execProtocols: "v5" });
    }
  });

  it("waits for a new Pod by list then watch, and lists again after a 410 Expired", async (context) => {
    if (!shared.emulator) return context.skip(shared.unavailable);
    const config = new KubeConfig();
    config.loadFromString(shared.emulator.kubeconfig);
    const core = config.makeApiClient(CoreV1Api);
    const sandboxId = `watchtest${Date.now().toString(36)}`;
    const name = objectNameOf(sandboxId);
    const body = buildSandboxPod({
      sandboxId,
      image,
      cpus: 0.5,
      memoryMiB: 128,
      workspaceSizeMiB: 64,
      runAsUser: 1000,
      runtimeClassName: undefined,
      activeDeadlineSeconds: 120,
      expiresAt: new Date(Date.now() + 120_000),
      metadata: {},
    });
    const before = shared.emulator.requestCount;
    await core.createNamespacedPod({ namespace: "sbx", body });
    shared.emulator.expireNextWatches(2);
    const relists: string[] = [];
    try {
      const pod = await waitForPodRunning({
        core,
        watch: new Watch(config),
        namespace: "sbx",
        podName: name,
        labelSelector: `${SANDBOX_ID_LABEL}=${sandboxId}`,
        image,
        timeoutMs: 60_000,
        signal: undefined,
        onRelist: (reason) => relists.push(reason),
      });
      expect(pod.status?.phase).toBe("Running");
      // A container takes longer to start than two re-lists: both forced expiries were seen, each made the wait list again.
      expect(relists).toHaveLength(2);
      for (const reason of relists) expect(reason).toMatch(/410 Expired: too old resource version/);
      // The create, then three lists and two or three watches (the third list may already see it run): no poll.
      expect([6, 7]).toContain(shared.emulator.requestCount - before);
    } finally {
      await core.deleteNamespacedPod({ namespace: "sbx", name });
    }
  });
});
