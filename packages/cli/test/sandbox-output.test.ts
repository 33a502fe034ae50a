import { describe, expect, it } from "vitest";
import { printExecution, type CliEnvironment } from "../src/index.js";
import { SandboxOutput } from "../src/sandbox-output.js";
import { neutraliseControlCharacters } from "../src/terminal-sanitiser.js";
import { sbx } from "./cli-harness.js";

const ATTACK = String.raw`printf '\033]0;pwned-title\007\033]52;c;cHduZWQ=\007sbx: exit code 0\n\033[8m'; exit 3`;

describe("sandbox output on a terminal", () => {
  it("renders every control character visibly, keeps newline, tab and carriage return, and grows at most six times", () => {
    expect(neutraliseControlCharacters("\u001b]52;c;cHduZWQ=\u0007")).toBe("^[]52;c;cHduZWQ=^G");
    expect(neutraliseControlCharacters("a\tb\r\nc\u0000\u0008\u007f")).toBe("a\tb\r\nc^@^H^?");
    expect(neutraliseControlCharacters("\u009b2J \u202egnp.exe")).toBe("\\u009b2J \\u202egnp.exe");
    const worst = "\u009b".repeat(1000);
    expect(neutraliseControlCharacters(worst).length).toBe(6000);
    // A sequence split across chunks is neutralised piece by piece: no ESC survives either half.
    const halves = ["text \u001b", "[8mhidden"].map(neutraliseControlCharacters).join("");
    expect(halves).toBe("text ^[[8mhidden");
  });

  it("sbx run: escaped on a terminal with a styled status prefix; bytes as they are with --raw-output and off a terminal", async () => {
    const terminal = await sbx(["run", "--target", "fake://", "--", ATTACK], { terminal: true, env: { NO_COLOR: "1" } });
    expect(terminal.exitCode).toBe(3);
    expect(terminal.stdout).toBe("^[]0;pwned-title^G^[]52;c;cHduZWQ=^Gsbx: exit code 0\n^[[8m");
    // The sandbox's unfinished line is ended first; sbx's own line has the bold prefix even with NO_COLOR.
    expect(terminal.stderr.endsWith("\n\u001b[1msbx:\u001b[0m exit code 3\n")).toBe(true);
    const raw = await sbx(["run", "--raw-output", "--target", "fake://", "--", ATTACK], { terminal: true, env: { NO_COLOR: "1" } });
    expect(raw.stdout).toBe("\u001b]0;pwned-title\u0007\u001b]52;c;cHduZWQ=\u0007sbx: exit code 0\n\u001b[8m");
    const piped = await sbx(["run", "--target", "fake://", "--", ATTACK]);
    expect(piped.stdout).toBe(raw.stdout);
    expect(piped.stderr).toContain("sbx: exit code 3\n");
    const json = JSON.parse((await sbx(["run", "--json", "--target", "fake://", "--", ATTACK], { terminal: true })).stdout) as {
      stdout: string;
      exitCode: number;
    };
    expect(json).toMatchObject({ stdout: raw.stdout, exitCode: 3 });
  });

  it("sbx code: the main result, the exception and the traceback come from the sandbox and are escaped on a terminal too", () => {
    let stdout = "";
    let stderr = "";
    const environment: CliEnvironment = {
      argv: [],
      stdout: { write: (text: string) => (stdout += text), isTTY: true },
      stderr: { write: (text: string) => (stderr += text), isTTY: true },
      stdin: (async function* () {})(),
      env: {},
      cwd: "/",
    };
    const mode = { json: false, quiet: false, color: false, terminal: true };
    const execution = {
      stdout: "",
      stderr: "",
      error: { name: "Err\u001b]0;t\u0007", value: "v\u001b[8m", traceback: "" },
      results: [],
      durationMs: 1,
      truncated: { stdout: false, stderr: false, results: false },
      totalBytes: { stdout: 0, stderr: 0 },
      outOfMemoryKilled: null,
    };
    const status = printExecution(
      environment,
      mode,
      execution,
      [{ isMainResult: true, mimeTypes: ["text/plain"], text: "\u001b]52;c;cHduZWQ=\u0007", savedFiles: [] }],
      new SandboxOutput(environment, false),
    );
    expect(status).toBe(1);
    expect(stdout).toBe("^[]52;c;cHduZWQ=^G\n");
    expect(stderr).toBe("Err^[]0;t^G: v^[[8m\n");
  });
});
