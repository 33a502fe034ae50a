import { mkdtemp, readFile, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { detectBackends } from "@sbx/core";
import { describe, expect, it } from "vitest";
import { printExecution, renderDoctor, saveRichResults } from "../src/index.js";
import { normalise, sbx } from "./cli-harness.js";

describe("sbx run", () => {
  it("streams the command's output and exits with its exit code", async () => {
    const outcome = await sbx(["run", "--target", "fake://", "--", "echo out; echo err >&2; exit 3"]);
    expect(outcome.exitCode).toBe(3);
    expect(outcome.stdout).toBe("out\n");
    expect(normalise(outcome.stderr)).toMatchInlineSnapshot(`
      "sbx: sandbox <fake-id> on fake, network denied
      err
      sbx: exit code 3
      "
    `);
  });

  it("quotes several arguments after -- as one command line", async () => {
    const outcome = await sbx(["run", "--quiet", "--target", "fake://", "--", "printf", "%s|", "a b", "it's"]);
    expect(outcome).toEqual({ exitCode: 0, stdout: "a b|it's|", stderr: "" });
  });

  it("--json prints one document with the result and nothing else on stdout", async () => {
    const outcome = await sbx(["run", "--json", "--target", "fake://", "--env", "GREETING=hi", "--", "echo $GREETING; exit 4"]);
    expect(outcome.exitCode).toBe(4);
    expect(outcome.stderr).toBe("");
    expect(normalise(outcome.stdout)).toMatchInlineSnapshot(`
      "{
        "sandbox": {
          "id": "<fake-id>",
          "backend": "fake"
        },
        "command": "echo $GREETING; exit 4",
        "exitCode": 4,
        "stdout": "hi\\n",
        "stderr": "",
        "truncated": {
          "stdout": false,
          "stderr": false
        },
        "durationMs": <ms>
      }
      "
    `);
  });

  it("prints a typed error with its remedy and exits 125", async () => {
    const outcome = await sbx(["run", "--target", "nosuch://", "--", "true"]);
    expect(outcome.exitCode).toBe(125);
    expect(outcome.stdout).toBe("");
    expect(outcome.stderr).toMatchInlineSnapshot(`
      "error [SBX_INVALID_ARGUMENT]: Unknown backend scheme "nosuch". Known schemes: apple-container://, docker://, e2b://, fake://, k8s://, modal://. For a third-party adapter, call registerProvider("nosuch", createSandboxProvider) before createSandbox().
      remedy: Fix the option named above; \`sbx <command> --help\` lists them.
      "
    `);
  });

  it("exits 124 with the timeout's remedy when the command runs past --timeout", async () => {
    const outcome = await sbx(["run", "--target", "fake://", "--timeout", "1s", "--", "sleep 30"]);
    expect(outcome.exitCode).toBe(124);
    expect(normalise(outcome.stderr)).toMatchInlineSnapshot(`
      "sbx: sandbox <fake-id> on fake, network denied
      error [SBX_TIMEOUT]: The command ran past its 1000 ms timeout. The command and every process it started were killed (verified by the backend).
      remedy: Raise --timeout, or make the command finish sooner.
      "
    `);
  });

  it("--json reports errors as a JSON document with code and remedy", async () => {
    const outcome = await sbx(["run", "--json", "--target", "fake://", "--network", "allow", "--network", "deny", "--timeout", "soon", "--", "true"]);
    expect(outcome.exitCode).toBe(2);
    expect(JSON.parse(outcome.stdout)).toEqual({
      error: {
        code: "USAGE",
        name: "UsageError",
        message: '--timeout expects a duration such as 30s, 5m or 1500ms, not "soon".',
        remedy: "Run `sbx --help` for usage.",
        retryable: false,
        backend: null,
      },
    });
  });

  it("refuses a missing command and unknown flags as usage errors (exit 2)", async () => {
    expect((await sbx(["run", "--target", "fake://"])).exitCode).toBe(2);
    const unknown = await sbx(["run", "--frobnicate", "--", "true"]);
    expect(unknown.exitCode).toBe(2);
    expect(unknown.stderr).toContain("error [USAGE]: Unknown option '--frobnicate'");
  });

  it("colours errors on a terminal, and not with NO_COLOR", async () => {
    const coloured = await sbx(["run", "--target", "nosuch://", "--", "true"], { terminal: true });
    expect(coloured.stderr).toContain("\u001b[31merror\u001b[0m [SBX_INVALID_ARGUMENT]");
    const plain = await sbx(["run", "--target", "nosuch://", "--", "true"], { terminal: true, env: { NO_COLOR: "1" } });
    expect(plain.stderr).toContain("error [SBX_INVALID_ARGUMENT]");
    expect(plain.stderr).not.toContain("\u001b[");
  });

  it("uploads a file with plain progress lines when stderr is not a terminal", async () => {
    const directory = await mkdtemp(join(tmpdir(), "sbx-cli-"));
    await writeFile(join(directory, "data.bin"), Buffer.alloc(2 * 1024 * 1024, 7));
    const outcome = await sbx(["run", "--target", "fake://", "--upload", "data.bin:in/data.bin", "--", "wc -c < in/data.bin"], { cwd: directory });
    expect(outcome.exitCode).toBe(0);
    expect(outcome.stdout.trim()).toBe("2097152");
    expect(outcome.stderr).not.toContain("\r");
    expect(normalise(outcome.stderr)).toMatchInlineSnapshot(`
      "sbx: sandbox <fake-id> on fake, network denied
      sbx: upload data.bin: 0% (0 B of 2.0 MiB)
      sbx: upload data.bin: 25% (512.0 KiB of 2.0 MiB)
      sbx: upload data.bin: 50% (1.0 MiB of 2.0 MiB)
      sbx: upload data.bin: 75% (1.5 MiB of 2.0 MiB)
      sbx: upload data.bin: done, 2.0 MiB to in/data.bin
      sbx: exit code 0
      "
    `);
    const quiet = await sbx(["run", "--quiet", "--target", "fake://", "--upload", "data.bin", "--", "wc -c < data.bin"], { cwd: directory });
    expect(quiet).toEqual({ exitCode: 0, stdout: "2097152\n", stderr: "" });
  });
});

describe("sbx code", () => {
  it("runs Python from standard input and prints its output", async () => {
    const outcome = await sbx(["code", "--quiet", "--target", "fake://", "-"], {
      stdin: "import sys\nprint(6 * 7)\nprint('warn', file=sys.stderr)\n",
    });
    expect(outcome).toEqual({ exitCode: 0, stdout: "42\n", stderr: "warn\n" });
  });

  it("exits 1 and shows the traceback once when the code raises", async () => {
    const directory = await mkdtemp(join(tmpdir(), "sbx-cli-"));
    await writeFile(join(directory, "boom.py"), "print('before')\n1 / 0\n");
    const outcome = await sbx(["code", "--quiet", "--target", "fake://", "boom.py"], { cwd: directory });
    expect(outcome.exitCode).toBe(1);
    expect(outcome.stdout).toBe("before\n");
    expect(outcome.stderr.match(/ZeroDivisionError: division by zero/g)).toHaveLength(1);
    const json = await sbx(["code", "--json", "--target", "fake://", "boom.py"], { cwd: directory });
    expect(json.exitCode).toBe(1);
    const document = JSON.parse(json.stdout);
    expect(document.error).toMatchObject({ name: "ZeroDivisionError", value: "division by zero" });
    expect(document.results).toBeNull();
  });

  it("saves image results to files and says where", async () => {
    const directory = await mkdtemp(join(tmpdir(), "sbx-cli-"));
    const png = Buffer.from("89504e470d0a1a0a0000000d49484452", "hex");
    const rendered = await saveRichResults(
      [{ isMainResult: true, data: { "text/plain": "<Figure size 640x480>", "image/png": png.toString("base64") } }],
      directory,
      directory,
    );
    expect(rendered).toEqual([
      { isMainResult: true, mimeTypes: ["text/plain", "image/png"], text: "<Figure size 640x480>", savedFiles: ["result-1.png"] },
    ]);
    expect(await readFile(join(directory, "result-1.png"))).toEqual(png);
    let stdout = "";
    let stderr = "";
    const environment = {
      argv: [],
      stdout: { write: (text: string) => (stdout += text) },
      stderr: { write: (text: string) => (stderr += text) },
      stdin: (async function* () {})(),
      env: {},
      cwd: directory,
    };
    const status = printExecution(
      environment,
      { json: false, quiet: false, color: false, terminal: false },
      {
        stdout: "",
        stderr: "",
        error: null,
        results: [],
        durationMs: 1,
        truncated: { stdout: false, stderr: false, results: false },
        totalBytes: { stdout: 0, stderr: 0 },
        outOfMemoryKilled: null,
      },
      rendered,
    );
    expect(status).toBe(0);
    expect(stdout).toBe("<Figure size 640x480>\n");
    expect(stderr).toBe("sbx: saved image/png result to result-1.png\n");
  });
});

describe("sbx doctor", () => {
  it("renders a table of backends with remedies and a verdict", () => {
    const text = renderDoctor(
      [
        { backend: "docker", usable: false, isolating: true, reason: "Cannot reach the engine.", remedy: "Start Docker." },
        { backend: "fake", usable: true, isolating: false, reason: "in-process fake", remedy: "" },
      ],
      { json: false, quiet: false, color: false, terminal: false },
    );
    expect(text).toMatchInlineSnapshot(`
      "BACKEND  USABLE  ISOLATING                     DETAIL
      docker   no      yes                           Cannot reach the engine. Remedy: Start Docker.
      fake     yes     no (not a security boundary)  in-process fake

      No isolating backend is usable here: follow a remedy above (the fake is for tests only).
      "
    `);
  });

  it("--json reports exactly what detectBackends() reports, and the exit status follows it", async () => {
    const outcome = await sbx(["doctor", "--json"]);
    const statuses = (await detectBackends()).sort((left, right) => left.backend.localeCompare(right.backend));
    const document = JSON.parse(outcome.stdout);
    expect(document.backends.map((status: { backend: string; usable: boolean }) => [status.backend, status.usable])).toEqual(
      statuses.map((status) => [status.backend, status.usable]),
    );
    const isolatingUsable = statuses.some((status) => status.usable && status.isolating);
    expect(document.ok).toBe(isolatingUsable);
    expect(outcome.exitCode).toBe(isolatingUsable ? 0 : 1);
  });
});

describe("the command line itself", () => {
  it("prints usage for --help and refuses unknown commands", async () => {
    const help = await sbx(["--help"]);
    expect(help.exitCode).toBe(0);
    expect(help.stdout).toContain("sbx run [--target URI]");
    const unknown = await sbx(["frobnicate"]);
    expect(unknown.exitCode).toBe(2);
    expect(unknown.stderr).toBe(
      'error [USAGE]: Unknown command "frobnicate". Commands: run, code, shell, doctor, ls, gc, mcp.\nremedy: Run `sbx --help` for usage.\n',
    );
  });
});
