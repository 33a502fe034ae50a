import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { promisify } from "node:util";
import { CONTAINER_STANDIN_BINARY, removeStandinNamespace } from "@sbx/container-standin";
import { createSandbox } from "@sbx/core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSandboxProvider } from "../src/index.js";

/**
 * Commands through the sbx agent on apple-container (adr/0052), through the stand-in CLI on the Docker Engine: what the
 * contract suite does not look at. Skips with the reason when there is no engine.
 */
const execute = promisify(execFile);
const namespace = `agent-${randomBytes(4).toString("hex")}`;
const image = process.env.SBX_DOCKER_IMAGE ?? "sbx-test/python:3.11";
const provider = createSandboxProvider({
  image,
  binary: CONTAINER_STANDIN_BINARY,
  checkPlatform: false,
  environment: { CONTAINER_STANDIN_NAMESPACE: namespace },
});
let engineProblem: string | undefined;

beforeAll(async () => {
  engineProblem = await execute("docker", ["info"]).then(
    () => undefined,
    () => "no Docker Engine (docker info failed)",
  );
});

afterAll(async () => {
  if (!engineProblem) await removeStandinNamespace(namespace);
});

describe("commands through the sbx agent (apple-container, stand-in)", () => {
  it("run in the agent, tagged: the same agent is every command's parent, and each command has its own audit tag", async (context) => {
    if (engineProblem) return context.skip(engineProblem);
    await using sandbox = await createSandbox(provider);
    const first = await sandbox.commands.run("echo $PPID; cat /proc/self/loginuid");
    const second = await sandbox.commands.run("echo $PPID; cat /proc/self/loginuid");
    const [firstParent, firstTag] = first.stdout.trim().split("\n");
    const [secondParent, secondTag] = second.stdout.trim().split("\n");
    expect(secondParent, "both commands were started by one agent process").toBe(firstParent);
    const agentCommandLine = await sandbox.commands.run(`head -c 17 /proc/${firstParent}/cmdline | tr '\\0' ' '`);
    expect(agentCommandLine.stdout).toBe("python3 -I -u -c ");
    const agentTag = await sandbox.commands.run(`cat /proc/${firstParent}/loginuid`);
    expect(agentTag.stdout, "the agent's own audit tag is unset").toBe("4294967295");
    expect(firstTag).toMatch(/^[1-9][0-9]+$/);
    expect(firstTag).not.toBe("4294967295");
    expect(secondTag).not.toBe(firstTag);
  });

  it("a command that closes its stdin while input still flows does not end the agent (no SIGPIPE death)", async (context) => {
    if (engineProblem) return context.skip(engineProblem);
    await using sandbox = await createSandbox(provider);
    const agentBefore = (await sandbox.commands.run("echo $PPID")).stdout.trim();
    const handle = await sandbox.commands.start("exec 0<&-; sleep 1; echo closed-its-stdin", { stdin: true });
    const chunk = "x".repeat(65_536);
    // More than a pipe holds, so the agent writes into the closed pipe while the command still runs.
    for (let index = 0; index < 64; index += 1) await handle.writeStdin(chunk).catch(() => undefined);
    const result = await handle.wait();
    expect(result.exitCode).toBe(0);
    expect(result.stdout).toBe("closed-its-stdin\n");
    const agentAfter = (await sandbox.commands.run("echo $PPID")).stdout.trim();
    expect(agentAfter, "the next command ran in the same agent").toBe(agentBefore);
  });
});
