import { createSandbox, type ExecutionResult, type Sandbox } from "@sbx/core";
import { startE2BEmulator, type E2BEmulator } from "@sbx/e2b-emulator";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSandboxProvider } from "../src/index.js";

/**
 * Rich results travel from the code interpreter's own result lines (the emulator sends them as real E2B's server
 * does: one field per known MIME type, the rest under `extra`) through the unmodified `@e2b/code-interpreter` SDK to
 * sbx's `ExecutionResult`: every MIME type must arrive, none may be invented.
 */
let emulator: E2BEmulator | undefined;
let sandbox: Sandbox | undefined;
let unavailable: string | undefined;

beforeAll(async () => {
  try {
    emulator = await startE2BEmulator({});
    sandbox = await createSandbox(createSandboxProvider(emulator.connectionOptions));
  } catch (error) {
    unavailable = error instanceof Error ? error.message : String(error);
    if ((process.env.SBX_REQUIRE ?? "").includes("e2b"))
      throw new Error(`SBX_REQUIRE contains "e2b" but the E2B emulator could not start: ${unavailable}`, { cause: error });
    console.warn(`[@sbx/e2b] SKIPPING rich result tests: the E2B emulator could not start: ${unavailable}`);
  }
});
afterAll(async () => {
  await sandbox?.kill();
  await emulator?.stop();
});

const everyFormat = [
  "class Everything:",
  "    def _repr_html_(self): return '<b>html</b>'",
  "    def _repr_markdown_(self): return '**markdown**'",
  "    def _repr_svg_(self): return '<svg/>'",
  "    def _repr_png_(self): return b'\\x89PNG\\r\\n\\x1a\\npng'",
  "    def _repr_jpeg_(self): return b'\\xff\\xd8\\xffjpeg'",
  "    def _repr_pdf_(self): return b'%PDF-1.4 pdf'",
  "    def _repr_latex_(self): return r'$\\alpha$'",
  "    def _repr_json_(self): return {'kind': 'json', 'values': [1, 2]}",
  "    def _repr_javascript_(self): return 'console.log(1)'",
  "    def _repr_e2b_data_(self): return {'column': [1, 2]}",
  "    def __repr__(self): return 'Everything()'",
  "Everything()",
].join("\n");

function base64(text: string): string {
  return Buffer.from(text, "latin1").toString("base64");
}

describe("E2B rich results through the SDK to ExecutionResult", () => {
  it("every format of the last expression becomes its MIME type, binary ones as base64", async (context) => {
    if (!sandbox) return context.skip(`E2B emulator unavailable: ${unavailable}`);
    const execution = await sandbox.runCode(everyFormat);
    expect(execution.error).toBeNull();
    expect(execution.results).toEqual<ExecutionResult[]>([
      {
        isMainResult: true,
        data: {
          "text/plain": "Everything()",
          "text/html": "<b>html</b>",
          "text/markdown": "**markdown**",
          "image/svg+xml": "<svg/>",
          "image/png": base64("\x89PNG\r\n\x1a\npng"),
          "image/jpeg": base64("\xff\xd8\xffjpeg"),
          "application/pdf": base64("%PDF-1.4 pdf"),
          "text/latex": "$\\alpha$",
          "application/json": JSON.stringify({ kind: "json", values: [1, 2] }),
          "application/javascript": "console.log(1)",
          "application/vnd.e2b.data+json": JSON.stringify({ column: [1, 2] }),
        },
      },
    ]);
  });

  it("a MIME type the server has no field for (its `extra`) is kept, which the SDK's own `extra` drops", async (context) => {
    if (!sandbox) return context.skip(`E2B emulator unavailable: ${unavailable}`);
    const execution = await sandbox.runCode(
      "class Plot:\n    def _repr_mimebundle_(self, include=None, exclude=None):\n        return {'text/plain': 'Plot', 'application/vnd.plotly.v1+json': {'data': []}}\nPlot()",
    );
    expect(execution.results).toEqual([{ isMainResult: true, data: { "text/plain": "Plot", "application/vnd.plotly.v1+json": '{"data":[]}' } }]);
  });

  it("display() gives results in order before the main result; a list also comes as application/json, as on E2B", async (context) => {
    if (!sandbox) return context.skip(`E2B emulator unavailable: ${unavailable}`);
    const execution = await sandbox.runCode("display(1)\ndisplay({'a': 1})\nprint('printed')\n[1, 2]");
    expect(execution.stdout).toBe("printed\n");
    expect(execution.results).toEqual([
      { isMainResult: false, data: { "text/plain": "1" } },
      { isMainResult: false, data: { "text/plain": "{'a': 1}", "application/json": '{"a":1}' } },
      { isMainResult: true, data: { "text/plain": "[1, 2]", "application/json": "[1,2]" } },
    ]);
  });

  it("nothing is made up: a print is no result, a statement ending in ';' shows nothing", async (context) => {
    if (!sandbox) return context.skip(`E2B emulator unavailable: ${unavailable}`);
    const execution = await sandbox.runCode("print('<b>not html</b>')\n1 + 1;");
    expect(execution.stdout).toBe("<b>not html</b>\n");
    expect(execution.results).toEqual([]);
  });
});
