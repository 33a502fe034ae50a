import { spawn } from "node:child_process";
import { mkdtempSync, existsSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { commandInvocation, INCOMPLETE_COMMAND_EXIT_CODE, LONG_COMMAND_BYTES } from "../src/command-invocation.js";

/**
 * The long-command bootstrap (ADR 0061), run by this host's own `/bin/sh` (what a Modal exec runs in the sandbox): it
 * takes exactly the header's bytes from stdin, runs the command only when the header is whole, and leaves the rest of
 * stdin to the command.
 */
const workspace = mkdtempSync(join(tmpdir(), "sbx-modal-invocation-"));

afterAll(() => rmSync(workspace, { recursive: true, force: true }));

/** Runs an invocation's argv locally, writing `stdin` (then EOF); resolves with its stdout and exit code. */
function runLocally(argv: readonly string[], stdin: Uint8Array): Promise<{ stdout: string; stderr: string; exitCode: number | null }> {
  return new Promise((resolve, reject) => {
    const child = spawn(argv[0]!, argv.slice(1), { stdio: ["pipe", "pipe", "pipe"] });
    const stdout: Buffer[] = [];
    const stderr: Buffer[] = [];
    child.stdout.on("data", (chunk: Buffer) => stdout.push(chunk));
    child.stderr.on("data", (chunk: Buffer) => stderr.push(chunk));
    child.on("error", reject);
    child.on("close", (exitCode) =>
      resolve({ stdout: Buffer.concat(stdout).toString("utf8"), stderr: Buffer.concat(stderr).toString("utf8"), exitCode }),
    );
    child.stdin.end(Buffer.from(stdin));
  });
}

const longText = "x".repeat(LONG_COMMAND_BYTES + 1000);

describe("commandInvocation", () => {
  it("a short command stays in the argv and writes nothing first on stdin", () => {
    const invocation = commandInvocation({ command: "echo hi", commandId: "a1", cwd: workspace, stdin: false });
    expect(invocation.stdinHeader).toBeUndefined();
    expect(invocation.argv).toContain("echo hi");
  });

  it("a long command goes on stdin: run whole, the bytes after its header are the command's stdin", async () => {
    const command = `: '${longText}'; printf '%s|' "$(pwd)"; cat`;
    const invocation = commandInvocation({ command, commandId: "b2", cwd: workspace, stdin: true });
    expect(invocation.argv.join(" ")).not.toContain(longText);
    const stdin = Buffer.concat([invocation.stdinHeader!, Buffer.from("rest of stdin\n")]);
    const result = await runLocally(invocation.argv, stdin);
    expect(result.stderr).toBe("");
    expect(result.exitCode).toBe(0);
    expect(result.stdout).toBe(`${workspace}|rest of stdin\n`);
  });

  it("a header cut short is refused with exit 125 and runs nothing", async () => {
    const marker = join(workspace, "ran");
    const command = `: '${longText}'; touch '${marker}'`;
    const invocation = commandInvocation({ command, commandId: "c3", cwd: workspace, stdin: true });
    const cut = invocation.stdinHeader!.subarray(0, invocation.stdinHeader!.byteLength - 5);
    const result = await runLocally(invocation.argv, cut);
    expect(result.exitCode).toBe(INCOMPLETE_COMMAND_EXIT_CODE);
    expect(existsSync(marker)).toBe(false);
  });
});
