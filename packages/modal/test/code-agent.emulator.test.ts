import { createHash } from "node:crypto";
import { createSandbox } from "@sbx/core";
import { shareEmulator } from "@sbx/emulator-kit/testing";
import { startModalEmulator } from "@sbx/modal-emulator";
import { Sandbox as ModalSandbox, type ContainerProcess } from "modal";
import { afterEach, describe, expect, it } from "vitest";
import { createSandboxProvider, STDIN_WRITE_BYTES } from "../src/index.js";

/**
 * The sbx sandbox agent over one Modal exec kept open (ADR 0061), through the emulator and the unmodified SDK: the
 * agent is started once and holds across calls (no exec per code run), its length-prefixed frames cross stdin and
 * stdout byte-exact and in order in both directions at sizes far past one stdin message, and every stdin write the
 * driver makes is at most `STDIN_WRITE_BYTES`. Skips loudly without Docker.
 */
const shared = shareEmulator({ start: () => startModalEmulator({}), backend: "modal", label: "@sbx/modal code-agent tests" });

const MEBIBYTE = 1024 * 1024;

function provider() {
  return createSandboxProvider({
    tokenId: shared.emulator!.tokenId,
    tokenSecret: shared.emulator!.tokenSecret,
    serverUrl: shared.emulator!.serverUrl,
    logLevel: "error",
  });
}

// eslint-disable-next-line @typescript-eslint/unbound-method -- kept to be called with the sandbox as `this` (originalExec.apply) when the wrapper is undone
const originalExec = ModalSandbox.prototype.exec;

/** What the SDK was asked to start, and the size of every stdin write made to those processes. */
interface ExecRecord {
  readonly argvs: string[][];
  readonly stdinWrites: number[];
}

/** Records every exec the SDK starts from now on and the size of each stdin write to it (the bytes are passed on unchanged). */
function recordExecs(): ExecRecord {
  const record: ExecRecord = { argvs: [], stdinWrites: [] };
  ModalSandbox.prototype.exec = async function (this: ModalSandbox, ...args: Parameters<typeof originalExec>) {
    record.argvs.push([...args[0]]);
    const process = (await originalExec.apply(this, args)) as ContainerProcess<Uint8Array>;
    const writer = process.stdin.getWriter();
    const writable = process as { stdin: WritableStream<Uint8Array> };
    writable.stdin = new WritableStream<Uint8Array>({
      write: async (chunk) => {
        record.stdinWrites.push(chunk.byteLength);
        await writer.write(chunk);
      },
      close: () => writer.close(),
      abort: (reason) => writer.abort(reason),
    });
    return process;
  } as typeof originalExec;
  return record;
}

/** modal@0.11.1's limit on an exec's arguments, in characters (`validateExecArgs`). */
const SDK_ARGUMENT_LIMIT = 65_536;

/** Whether an exec's argv is a command sent on stdin (the driver's bootstrap): only the agent's start is that long here. */
function isCommandOnStdin(argv: readonly string[]): boolean {
  return argv.some((part) => part.includes('dd bs=1 count="$1"'));
}

/** The length the SDK checks: every argument's length, added up. */
function argumentLength(argv: readonly string[]): number {
  return argv.reduce((sum, part) => sum + part.length, 0);
}

describe("the sbx agent over one Modal exec", () => {
  afterEach(() => {
    ModalSandbox.prototype.exec = originalExec;
  });

  it("starts once and holds: state kept across runs, no exec per run after the first", async (context) => {
    if (!shared.emulator) return context.skip(`Modal emulator unavailable: ${shared.unavailable}`);
    const record = recordExecs();
    await using sandbox = await createSandbox(provider());
    const codeContext = await sandbox.createCodeContext();
    const first = await sandbox.runCode("counter = 41", { contextId: codeContext.id });
    expect(first.error).toBeNull();
    // The agent's command line (its Python source) is longer than half the SDK's limit: it went on stdin, not in the argv.
    expect(record.argvs.filter(isCommandOnStdin)).toHaveLength(1);
    expect(Math.max(...record.argvs.map(argumentLength))).toBeLessThan(SDK_ARGUMENT_LIMIT / 2);
    const execsAfterStart = record.argvs.length;
    for (let run = 0; run < 5; run++) await sandbox.runCode("counter += 1", { contextId: codeContext.id });
    const last = await sandbox.runCode("counter", { contextId: codeContext.id });
    expect(last.results!.find((result) => result.isMainResult)?.data["text/plain"]).toBe("46");
    expect(record.argvs.length).toBe(execsAfterStart);
  });

  it("a 3 MiB source and a 6 MiB output cross the exec byte-exact and in order; stdin goes in writes of at most 256 KiB", async (context) => {
    if (!shared.emulator) return context.skip(`Modal emulator unavailable: ${shared.unavailable}`);
    const record = recordExecs();
    await using sandbox = await createSandbox(provider());
    // Host → sandbox: a source whose string literal is 3 MiB of numbered lines; the agent hashes what it received.
    const payload = Array.from({ length: (3 * MEBIBYTE) / 16 }, (_, index) => `${String(index).padStart(15, "0")}\n`).join("");
    const received = await sandbox.runCode(
      `import hashlib\npayload = ${JSON.stringify(payload)}\nprint(len(payload), hashlib.sha256(payload.encode()).hexdigest())`,
    );
    expect(received.error).toBeNull();
    expect(received.stdout.trim()).toBe(`${payload.length} ${createHash("sha256").update(payload).digest("hex")}`);
    // Sandbox → host: 6 MiB of numbered lines printed inside, compared with the same lines made here.
    const lines = (6 * MEBIBYTE) / 16;
    const printed = await sandbox.runCode(`import sys\nfor index in range(${lines}):\n    sys.stdout.write(str(index).zfill(15) + "\\n")`);
    expect(printed.error).toBeNull();
    expect(printed.truncated.stdout).toBe(false);
    const expected = Array.from({ length: lines }, (_, index) => `${String(index).padStart(15, "0")}\n`).join("");
    expect(printed.stdout.length).toBe(expected.length);
    expect(printed.stdout === expected).toBe(true);
    expect(record.stdinWrites.length).toBeGreaterThan((3 * MEBIBYTE) / STDIN_WRITE_BYTES);
    expect(Math.max(...record.stdinWrites)).toBeLessThanOrEqual(STDIN_WRITE_BYTES);
  });

  it("a command longer than the SDK's argument limit runs whole from stdin, and the rest of stdin is the command's", async (context) => {
    if (!shared.emulator) return context.skip(`Modal emulator unavailable: ${shared.unavailable}`);
    const record = recordExecs();
    await using sandbox = await createSandbox(provider());
    const text = Array.from({ length: 90_000 / 10 }, (_, index) => String(index).padStart(9, "0")).join(" ");
    const command = `printf %s '${text}' | sha256sum | cut -d' ' -f1; cat`;
    expect(command.length).toBeGreaterThan(SDK_ARGUMENT_LIMIT);
    const result = await sandbox.commands.run(command, { stdin: "after the header\n" });
    expect(result.stderr).toBe("");
    expect(result.exitCode).toBe(0);
    expect(result.stdout).toBe(`${createHash("sha256").update(text).digest("hex")}\nafter the header\n`);
    expect(record.argvs.filter(isCommandOnStdin)).toHaveLength(1);
    // Without stdin the command reads nothing after its header.
    const withoutStdin = await sandbox.commands.run(`: '${text}'; wc -c`);
    expect(withoutStdin.stdout.trim()).toBe("0");
  });
});
