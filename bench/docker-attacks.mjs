// Runs the issue-7 attacks against the Docker adapter of one checkout and prints one JSON line of figures per
// attack (seconds to end, processes left, containers left, what the API reported).
// Usage: node bench/docker-attacks.mjs [repository root, default: this checkout] [attack names...] [--smoke]
// Only talks to the local Docker Engine; creates labelled sandboxes and removes them.
import { spawn } from "node:child_process";
import { once } from "node:events";
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";
import Docker from "dockerode";
import { benchArguments, smoke } from "./lib/smoke.mjs";

const [rootArgument, ...named] = benchArguments;
const root = resolve(rootArgument ?? new URL("..", import.meta.url).pathname);
// Smoke mode (--smoke, lib/smoke.mjs): only the quickest attack, unless some are named.
const only = smoke && named.length === 0 ? ["apparmor-audit"] : named;
const core = await import(pathToFileURL(`${root}/packages/core/dist/index.js`).href);
const adapter = await import(pathToFileURL(`${root}/packages/docker/dist/index.js`).href);
const image = process.env.SBX_DOCKER_IMAGE ?? "sbx-test/python:3.11";
const docker = new Docker();
const provider = adapter.createSandboxProvider({ image });
const seconds = (start) => Math.round((Date.now() - start) / 100) / 10;
const describe = (error) =>
  error && typeof error === "object"
    ? { code: error.code ?? error.name, killed: error.killed, message: String(error.message).slice(0, 160) }
    : { value: String(error) };
const settle = (promise) =>
  promise.then(
    (value) => ({ ok: true, value }),
    (error) => ({ ok: false, error: describe(error) }),
  );
const countLine = (text, pattern) => text.split("\n").filter((line) => pattern.test(line)).length;
async function psOf(sandbox) {
  const result = await settle(sandbox.commands.run("ps -eo user:12,args --no-headers"));
  return result.ok ? result.value.stdout : `(ps failed: ${result.error.code})`;
}
async function gone(id) {
  try {
    return !(await docker.getContainer(id).inspect()).State.Running;
  } catch {
    return true;
  }
}

const attacks = {
  async "setsid-env-i"() {
    const sandbox = await core.createSandbox(provider);
    try {
      const started = Date.now();
      const escape =
        "(setsid env -i /bin/sleep 981 &); python3 -c \"import os\nif os.fork() == 0:\n    os.setsid()\n    if os.fork() == 0:\n        os.execve('/bin/sleep', ['sleep', '982'], {})\n\"; sleep 999";
      const outcome = await settle(sandbox.commands.run(escape, { timeoutMs: 1500 }));
      return {
        secondsToReturn: seconds(started),
        reported: outcome.ok ? outcome.value.exitCode : outcome.error,
        processesLeft: countLine(await psOf(sandbox), /sleep 98[12]|sleep 999/),
      };
    } finally {
      await sandbox.kill();
    }
  },
  async "kill-helper-sabotage"() {
    const sandbox = await core.createSandbox(provider);
    try {
      const handle = await sandbox.commands.start("(setsid env -i sh -c 'while :; do pkill -9 -f sbx-kil[l]; done' >/dev/null 2>&1 &); sleep 983");
      await new Promise((done) => setTimeout(done, 500));
      const killed = await settle(handle.kill());
      const afterKill = await psOf(sandbox);
      const started = Date.now();
      const later = await settle(sandbox.commands.run("sleep 984", { timeoutMs: 1000 }));
      const afterLater = await psOf(sandbox);
      return {
        handleKill: killed.ok ? "resolved" : killed.error,
        watchersLeft: countLine(afterKill, /while :; do pkill/),
        commandLeft: countLine(afterKill, /sleep 983/),
        laterTimeout: later.ok ? later.value.exitCode : later.error,
        laterSecondsToReturn: seconds(started),
        laterLeft: countLine(afterLater, /sleep 984/),
      };
    } finally {
      await sandbox.kill();
    }
  },
  async "fork-bomb"() {
    const sandbox = await core.createSandbox(provider, { limits: { pids: 64 } });
    try {
      const started = Date.now();
      const outcome = await settle(sandbox.commands.run("b() { b | b & }; b; sleep 60", { timeoutMs: 3000 }));
      const secondsToReturn = seconds(started);
      const probe = await settle(sandbox.commands.run("cat /sys/fs/cgroup/pids/pids.current", { timeoutMs: 15_000 }));
      return {
        secondsToReturn,
        reported: outcome.ok ? outcome.value.exitCode : outcome.error,
        pidsAfter: probe.ok ? Number(probe.value.stdout.trim()) : probe.error,
        usableAfter: probe.ok && probe.value.exitCode === 0,
      };
    } finally {
      await sandbox.kill();
    }
  },
  async "stop-the-deadline"() {
    const sandbox = await core.createSandbox(provider, { timeoutMs: 6000 });
    const created = Date.now();
    const attack = await settle(
      sandbox.commands.run(
        "for p in $(ps -eo pid= -o args= | awk '/sleep [0-9]/ && !/awk/ { print $1 }'); do kill -STOP $p && echo stopped $p; done; kill -STOP 1 && echo stopped 1; true",
      ),
    );
    let ended = false;
    while (Date.now() - created < 30_000) {
      if (await gone(sandbox.id)) {
        ended = true;
        break;
      }
      await new Promise((done) => setTimeout(done, 250));
    }
    const result = {
      lifetimeSeconds: 6,
      attackOutput: attack.ok ? attack.value.stdout.trim().split("\n").filter(Boolean) : attack.error,
      ended,
      secondsToEnd: ended ? seconds(created) : ">30",
    };
    await sandbox.kill();
    return result;
  },
  async "host-sigkill-reaper"() {
    const script = `import { createSandbox } from ${JSON.stringify(pathToFileURL(`${root}/packages/core/dist/index.js`).href)};
import { createSandboxProvider, PROCESS_SESSION } from ${JSON.stringify(pathToFileURL(`${root}/packages/docker/dist/index.js`).href)};
const provider = createSandboxProvider({ image: ${JSON.stringify(image)} });
const sandboxes = await Promise.all(Array.from({ length: 10 }, () => createSandbox(provider, { timeoutMs: 60_000 })));
process.stdout.write(JSON.stringify({ session: PROCESS_SESSION, ids: sandboxes.map((sandbox) => sandbox.id) }) + "\\n");
setInterval(() => {}, 1000);`;
    const child = spawn(process.execPath, ["--input-type=module", "-e", script], { stdio: ["ignore", "pipe", "inherit"] });
    let output = "";
    child.stdout.setEncoding("utf8");
    child.stdout.on("data", (text) => (output += text));
    while (!output.includes("\n")) await new Promise((done) => setTimeout(done, 100));
    const { session } = JSON.parse(output);
    child.kill("SIGKILL");
    await once(child, "exit");
    const killed = Date.now();
    const left = async () => (await docker.listContainers({ all: true, filters: { label: [`sbx.session=${session}`] } })).length;
    let remaining = await left();
    while (remaining > 0 && Date.now() - killed < 30_000) {
      await new Promise((done) => setTimeout(done, 250));
      remaining = await left();
    }
    const result = { sandboxes: 10, containersLeftAfter30s: remaining, secondsToZero: remaining === 0 ? seconds(killed) : ">30" };
    if (remaining > 0) await adapter.sweepOrphans({ docker });
    return result;
  },
  async "workspace-full"() {
    const sandbox = await core.createSandbox(provider);
    try {
      const fill = await settle(sandbox.commands.run("dd if=/dev/zero of=big bs=1M 2>&1 | tail -2; du -m big | cut -f1"));
      const echo = await settle(sandbox.commands.run("echo alive"));
      const code = await settle(sandbox.runCode("print(42)"));
      const upload = await settle(sandbox.files.write("upload.bin", new Uint8Array(100 * 1024 * 1024)));
      const partial = await settle(sandbox.commands.run("ls -la --time-style=+ /workspace | grep -v ' big$' | awk 'NR>3 { print $5, $NF }'"));
      const removed = await settle(sandbox.files.remove("big"));
      const after = await settle(sandbox.commands.run("echo alive"));
      return {
        fill: fill.ok
          ? { exitCode: fill.value.exitCode, outOfMemoryKilled: fill.value.outOfMemoryKilled, tail: fill.value.stdout.trim().split("\n").slice(-2) }
          : fill.error,
        commandAfterFill: echo.ok ? echo.value.exitCode : echo.error,
        runCodeAfterFill: code.ok ? { stdout: code.value.stdout, error: code.value.error } : code.error,
        upload100MB: upload.ok ? "succeeded" : upload.error,
        partialFilesLeft: partial.ok ? partial.value.stdout.trim() : partial.error,
        removeBig: removed.ok ? "removed" : removed.error,
        commandAfterRemove: after.ok ? after.value.exitCode : after.error,
      };
    } finally {
      await sandbox.kill();
    }
  },
  async "files-symlink-longname"() {
    const sandbox = await core.createSandbox(provider);
    try {
      await sandbox.commands.run("ln -s /etc etc-dir");
      const shadow = await settle(sandbox.files.read("etc-dir/shadow"));
      const long = await settle(sandbox.files.write("n".repeat(300), "x"));
      const missing = await settle(sandbox.files.write("a/b/" + "m".repeat(300) + "/c", "x"));
      return {
        readEtcShadow: shadow.ok ? `returned ${shadow.value.length} chars of /etc/shadow` : shadow.error,
        longName: long.ok ? "succeeded" : long.error,
        longNameNested: missing.ok ? "succeeded" : missing.error,
      };
    } finally {
      await sandbox.kill();
    }
  },
  async "lost-sandbox"() {
    const sandbox = await core.createSandbox(provider);
    await sandbox.files.write("kept.txt", "x");
    await docker.getContainer(sandbox.id).remove({ force: true, v: true });
    const run = await settle(sandbox.commands.run("echo hi"));
    const read = await settle(sandbox.files.read("kept.txt"));
    const shortLived = await core.createSandbox(provider, { timeoutMs: 3000 });
    const during = await settle(shortLived.commands.run("sleep 30"));
    await sandbox.kill();
    await shortLived.kill();
    return {
      commandsRun: run.ok ? run.value.exitCode : run.error.code,
      filesRead: read.ok ? "returned" : read.error.code,
      lifetimeEndsDuringCommand: during.ok ? `exit ${during.value.exitCode}` : during.error.code,
    };
  },
  async "apparmor-audit"() {
    const sandbox = await core.createSandbox(provider);
    try {
      return { enforcement: sandbox.audit().policies.privileges.enforcement };
    } finally {
      await sandbox.kill();
    }
  },
};

for (const [name, attack] of Object.entries(attacks)) {
  if (only.length > 0 && !only.includes(name)) continue;
  const outcome = await settle(attack());
  console.log(JSON.stringify({ attack: name, ...(outcome.ok ? outcome.value : { failed: outcome.error }) }));
}
process.exit(0);
