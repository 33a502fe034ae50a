import { spawn, spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { codeInterpreterForSuite } from "./emulator-fixture.js";
import { codeInterpreterDriverSource } from "../src/code-interpreter-driver.js";
import { skipDockerTests } from "./docker-availability.js";

/**
 * The code interpreter's display channel, as real E2B's server streams it from its Jupyter kernel
 * (e2b-dev/code-interpreter template/server: api/models/result.py, messaging.py, stream.py).
 */

/** Every field of the server's `Result` model, in its order: pydantic serialises them all, null when absent. */
const RESULT_FIELDS = [
  "type",
  "text",
  "html",
  "markdown",
  "svg",
  "png",
  "jpeg",
  "pdf",
  "latex",
  "json",
  "javascript",
  "data",
  "chart",
  "extra",
  "is_main_result",
];

type Line = Record<string, unknown> & { type: string };

describe.skipIf(skipDockerTests)("code interpreter rich results (the server's result lines, through @e2b/code-interpreter)", () => {
  const { emulator, sandbox } = codeInterpreterForSuite();

  async function executeRaw(code: string): Promise<Line[]> {
    const response = await fetch(`${emulator().url}/execute`, {
      method: "POST",
      headers: { "content-type": "application/json", "E2b-Sandbox-Id": sandbox().sandboxId, "E2b-Sandbox-Port": "49999" },
      body: JSON.stringify({ code }),
    });
    expect(response.status).toBe(200);
    return (await response.text())
      .split("\n")
      .filter((line) => line.trim())
      .map((line) => JSON.parse(line) as Line);
  }

  it("sends each result with every field of the server's model, png as bare base64, unknown MIME types under extra", async () => {
    const lines = await executeRaw(
      "class Picture:\n    def _repr_png_(self):\n        return bytes(range(256)) * 3\n    def _repr_mimebundle_(self, include=None, exclude=None):\n        return {'application/vnd.custom+json': {'k': [1]}}\nPicture()",
    );
    const results = lines.filter((line) => line.type === "result");
    expect(results).toHaveLength(1);
    const result = results[0]!;
    expect(Object.keys(result)).toEqual(RESULT_FIELDS);
    expect(result).toMatchObject({
      html: null,
      markdown: null,
      svg: null,
      jpeg: null,
      pdf: null,
      latex: null,
      json: null,
      javascript: null,
      data: null,
      chart: null,
      is_main_result: true,
    });
    expect(result.extra).toEqual({ "application/vnd.custom+json": { k: [1] } });
    expect(result.text).toMatch(/^<__main__\.Picture at 0x[0-9a-f]+>$/);
    // jupyter_client encodes bytes with b2a_base64(newline=False): no data: prefix, no line breaks.
    expect(result.png).toMatch(/^[A-Za-z0-9+/]+=*$/);
    const everyByte = Buffer.from(Array.from({ length: 256 }, (_, index) => index));
    expect(Buffer.from(result.png as string, "base64")).toEqual(Buffer.concat([everyByte, everyByte, everyByte]));
    expect(lines.map((line) => line.type)).toEqual(["result", "number_of_executions", "end_of_execution"]);
  });

  it("the last expression is the main result with text and every _repr_*_ format it has", async () => {
    const execution = await sandbox().runCode(
      [
        "class Rich:",
        "    def __repr__(self): return 'Rich()'",
        "    def _repr_html_(self): return '<b>html</b>'",
        "    def _repr_markdown_(self): return '*md*'",
        "    def _repr_svg_(self): return '<svg/>'",
        "    def _repr_latex_(self): return '$x$'",
        "    def _repr_json_(self): return {'a': 1}",
        "    def _repr_javascript_(self): return 'alert(1)'",
        "    def _repr_jpeg_(self): return b'\\xff\\xd8jpeg'",
        "    def _repr_pdf_(self): return b'%PDF'",
        "Rich()",
      ].join("\n"),
    );
    expect(execution.error).toBeUndefined();
    expect(execution.results).toHaveLength(1);
    const [main] = execution.results;
    expect(main).toMatchObject({
      isMainResult: true,
      text: "Rich()",
      html: "<b>html</b>",
      markdown: "*md*",
      svg: "<svg/>",
      latex: "$x$",
      json: { a: 1 },
      javascript: "alert(1)",
    });
    expect(Buffer.from(main!.jpeg!, "base64")).toEqual(Buffer.from("\xff\xd8jpeg", "latin1"));
    expect(Buffer.from(main!.pdf!, "base64").toString("latin1")).toBe("%PDF");
    expect(main!.formats()).toEqual(["html", "markdown", "svg", "jpeg", "pdf", "latex", "json", "javascript"]);
  });

  it("display() sends one result per object, in order with the output, none of them main; display is a builtin", async () => {
    const execution = await sandbox().runCode(
      "print('before')\ndisplay('first', 2)\nclass Page:\n    def _repr_html_(self): return '<p>page</p>'\ndisplay(Page(), include=['text/html'])\nprint('after')\n'last'",
    );
    expect(execution.error).toBeUndefined();
    expect(execution.results.map((result) => [result.isMainResult, result.text, result.html])).toEqual([
      // The server strips one pair of enclosing quotes from every text/plain, display() ones too.
      [false, "first", null],
      [false, "2", null],
      [false, null, "<p>page</p>"],
      [true, "last", null],
    ]);
    expect(execution.logs.stdout).toEqual(["before\n", "after\n"]);
    expect((await sandbox().runCode("import builtins\nbuiltins.display is display")).text).toBe("True");
  });

  it("raw bundles, _ipython_display_, display handles and a trailing ';' behave as in IPython", async () => {
    const raw = await sandbox().runCode("display({'text/plain': 'plain', 'text/markdown': '# md'}, raw=True)");
    expect(raw.results.map((result) => [result.text, result.markdown])).toEqual([["plain", "# md"]]);
    const own = await sandbox().runCode("class Own:\n    def _ipython_display_(self):\n        display('from own')\nOwn()");
    expect(own.results.map((result) => [result.isMainResult, result.text])).toEqual([[false, "from own"]]);
    const handle = await sandbox().runCode("handle = display(5, display_id='my-id')\nhandle.update(6)\nhandle.display_id");
    expect(handle.results.map((result) => [result.isMainResult, result.text])).toEqual([
      [false, "5"],
      [true, "my-id"],
    ]);
    const quiet = await sandbox().runCode("value = 7\nvalue;  # a comment");
    expect(quiet.results).toEqual([]);
    // "_" is the last value displayed, as IPython's displayhook keeps it (a quiet cell does not change it).
    expect((await sandbox().runCode("value")).text).toBe("7");
    expect((await sandbox().runCode("value = 0\n_ * 2")).text).toBe("14");
  });

  it("a failing formatter is the cell's error (ipykernel's showtraceback) and the other formats still arrive; a wrong type is dropped", async () => {
    const failing = await sandbox().runCode(
      "class Bad:\n    def __repr__(self): return 'Bad()'\n    def _repr_html_(self): raise ValueError('no html')\nBad()",
    );
    expect(failing.error).toMatchObject({ name: "ValueError", value: "no html" });
    expect(failing.error!.traceback).toContain("_repr_html_");
    expect(failing.results.map((result) => [result.isMainResult, result.text, result.html])).toEqual([[true, "Bad()", null]]);
    const unimplemented = await sandbox().runCode(
      "class Later:\n    def __repr__(self): return 'Later()'\n    def _repr_html_(self): raise NotImplementedError\nLater()",
    );
    expect(unimplemented.error).toBeUndefined();
    expect(unimplemented.results.map((result) => result.text)).toEqual(["Later()"]);
    const wrongType = await sandbox().runCode(
      "class Wrong:\n    def __repr__(self): return 'Wrong()'\n    def _repr_html_(self): return 42\nWrong()",
    );
    expect(wrongType.results.map((result) => [result.text, result.html])).toEqual([["Wrong()", null]]);
    expect(wrongType.logs.stderr.join("")).toContain("text/html formatter returned invalid type");
  });

  it("lists and dicts also come as json (E2B's orjson formatter); classes and functions read as IPython prints them", async () => {
    const list = await sandbox().runCode("[1, (2, 3), {4: None}]");
    expect(list.results[0]).toMatchObject({ isMainResult: true, text: "[1, (2, 3), {4: None}]", json: [1, [2, 3], { "4": null }] });
    expect((await sandbox().runCode("[{1, 2}]")).results[0]!.json).toBeNull();
    expect((await sandbox().runCode("int")).text).toBe("int");
    expect((await sandbox().runCode("class Local: pass\nLocal")).text).toBe("__main__.Local");
    expect((await sandbox().runCode("def f(x, y=1): pass\nf")).text).toBe("<function __main__.f(x, y=1)>");
  });

  it("figures appear as image/png only where matplotlib is installed; without it, importing it fails as it would", async () => {
    const probe = await sandbox().runCode("import importlib.util\nimportlib.util.find_spec('matplotlib') is not None");
    if (probe.text === "True") {
      const figure = await sandbox().runCode("import matplotlib.pyplot as plt\nplt.plot([1, 2])\nNone");
      expect(
        figure.results.map((result) => [
          result.isMainResult,
          Buffer.from(result.png ?? "", "base64")
            .subarray(0, 4)
            .toString("latin1"),
        ]),
      ).toEqual([[false, "\x89PNG"]]);
    } else {
      expect((await sandbox().runCode("import matplotlib")).error?.name).toBe("ModuleNotFoundError");
    }
  });
});

/**
 * The driver's matplotlib path on the host's python3 (the test image has no matplotlib; .ci/provision.sh installs
 * python3-matplotlib on the host): the same driver source, spoken to over its stdin/stdout.
 */
const hostPython = "/usr/bin/python3";
const hostMatplotlib = spawnSync(hostPython, ["-c", "import matplotlib"], { stdio: "ignore" }).status === 0;
if (!hostMatplotlib)
  console.warn(
    `[e2b-emulator tests] skipped the matplotlib driver tests: ${hostPython} cannot import matplotlib (bash .ci/provision.sh installs python3-matplotlib)`,
  );

async function runCells(cells: string[]): Promise<Line[][]> {
  const directory = mkdtempSync(join(tmpdir(), "sbx-e2b-driver-"));
  const driverPath = join(directory, "code_interpreter_driver.py");
  writeFileSync(driverPath, codeInterpreterDriverSource);
  const { MPLBACKEND: _ignored, ...environment } = process.env;
  const child = spawn(hostPython, ["-u", driverPath], {
    cwd: directory,
    env: { ...environment, HOME: directory, MPLCONFIGDIR: directory },
    stdio: ["pipe", "pipe", "inherit"],
  });
  const outcomes: Line[][] = [];
  try {
    let buffered = "";
    let current: Line[] = [];
    let finishCell: (() => void) | undefined;
    child.stdout.on("data", (chunk: Buffer) => {
      buffered += chunk.toString("utf8");
      let newline: number;
      while ((newline = buffered.indexOf("\n")) >= 0) {
        const line = JSON.parse(buffered.slice(0, newline)) as Line;
        buffered = buffered.slice(newline + 1);
        if (line.type === "ready") continue;
        current.push(line);
        if (line.type === "end_of_execution") {
          outcomes.push(current);
          current = [];
          finishCell?.();
        }
      }
    });
    for (const code of cells) {
      await new Promise<void>((resolve, reject) => {
        finishCell = resolve;
        child.once("exit", (code) => reject(new Error(`the driver exited (${code})`)));
        child.stdin.write(JSON.stringify({ code }) + "\n");
      });
    }
    return outcomes;
  } finally {
    child.kill("SIGKILL");
    rmSync(directory, { recursive: true, force: true });
  }
}

function pngSignature(line: Line): string {
  return Buffer.from(String(line.png), "base64").subarray(0, 8).toString("latin1");
}

describe.skipIf(!hostMatplotlib)("code interpreter driver: matplotlib figures (inline backend)", () => {
  it("plt.show() displays open figures at once, figures still open display after the main result, then all are closed", async () => {
    const [shown, closed, empty, backend] = await runCells([
      "import matplotlib.pyplot as plt\nplt.plot([1, 2, 3])\nprint('before show')\nplt.show()\nprint('after show')\nplt.figure()\nplt.bar([1], [2])\n'done'",
      "import matplotlib.pyplot as plt\nlen(plt.get_fignums())",
      "plt.figure()\nNone",
      "import matplotlib, os, subprocess, sys\nprint(matplotlib.get_backend())\nprint(subprocess.run([sys.executable, '-c', 'import os; print(os.environ.get(\"MPLBACKEND\"))'], capture_output=True, text=True).stdout.strip())",
    ]);
    const events = shown!
      .filter((line) => line.type !== "number_of_executions")
      .map((line) =>
        line.type === "result" ? `result:${String(line.is_main_result)}:${String(line.text)}` : `${line.type}:${String(line.text ?? "")}`,
      );
    expect(events).toEqual([
      "stdout:before show\n",
      "result:false:<Figure size 640x480 with 1 Axes>",
      "stdout:after show\n",
      "result:true:done",
      "result:false:<Figure size 640x480 with 1 Axes>",
      "end_of_execution:",
    ]);
    const figures = shown!.filter((line) => line.type === "result" && line.is_main_result === false);
    expect(figures.map(pngSignature)).toEqual(["\x89PNG\r\n\x1a\n", "\x89PNG\r\n\x1a\n"]);
    expect(figures[0]!.png).not.toBe(figures[1]!.png);
    expect(closed!.find((line) => line.type === "result")?.text).toBe("0");
    // An empty figure is shown as text only (IPython's print_figure gives nothing for it).
    expect(empty!.filter((line) => line.type === "result").map((line) => [line.text, line.png])).toEqual([
      ["<Figure size 640x480 with 0 Axes>", null],
    ]);
    // The inline backend is set inside the interpreter only: a subprocess does not inherit it.
    expect(
      backend!
        .filter((line) => line.type === "stdout")
        .map((line) => line.text)
        .join(""),
    ).toBe("module://_e2b_emulator_inline_backend\nNone\n");
  });

  it("figures are shown after a cell that raised, and the error stays the cell's", async () => {
    const [failed] = await runCells(["import matplotlib.pyplot as plt\nplt.plot([3, 1])\nraise RuntimeError('after plotting')"]);
    expect(failed!.map((line) => line.type)).toEqual(["error", "result", "number_of_executions", "end_of_execution"]);
    expect(failed![0]).toMatchObject({ name: "RuntimeError", value: "after plotting" });
    expect(pngSignature(failed![1]!)).toBe("\x89PNG\r\n\x1a\n");
  });
});
