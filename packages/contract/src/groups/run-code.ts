import { expect } from "vitest";
import {
  describeGroup,
  expectCapabilityRefused,
  expectSbxError,
  type ContractHarness,
  type SandboxContractOptions,
  type SandboxProviderFactoryForContract,
} from "../harness.js";

/** Registers the `runCode()` tests, or their refusal when the manifest lists no languages (or not Python). */
export function registerRunCodeTests(harness: ContractHarness): void {
  const { contractTest, capabilities } = harness;

  contractTest("run-code.unknown-language", "an undeclared language raises SBX_CAPABILITY_NOT_SUPPORTED", async () => {
    await using sandbox = await harness.createSandbox();
    await expectCapabilityRefused(
      harness,
      () => sandbox.runCode("print(1)", { language: "sbx-contract-nonexistent" }),
      "language:sbx-contract-nonexistent",
    );
  });

  if (!capabilities.languages.includes("python")) {
    contractTest("run-code.refused", "runCode() in Python raises SBX_CAPABILITY_NOT_SUPPORTED when Python is not declared", async () => {
      await using sandbox = await harness.createSandbox();
      await expectCapabilityRefused(harness, () => sandbox.runCode("print(1)"), "language:python");
    });
    return;
  }

  contractTest("run-code.stdout", "one-shot Python prints to stdout and stderr", async () => {
    await using sandbox = await harness.createSandbox();
    const streamed: string[] = [];
    const execution = await sandbox.runCode("import sys\nprint('hello from python')\nprint('to stderr', file=sys.stderr)", {
      onStdout: (text) => streamed.push(text),
    });
    expect(execution.error).toBeNull();
    expect(execution.stdout).toBe("hello from python\n");
    expect(execution.stderr).toBe("to stderr\n");
    expect(streamed.join("")).toBe("hello from python\n");
  });

  contractTest("run-code.error", "an exception is a result with name, value and traceback, not a thrown error", async () => {
    await using sandbox = await harness.createSandbox();
    const execution = await sandbox.runCode("print('before')\n1 / 0");
    expect(execution.stdout).toBe("before\n");
    expect(execution.error).not.toBeNull();
    expect(execution.error!.name).toBe("ZeroDivisionError");
    expect(execution.error!.value).toContain("division by zero");
    expect(execution.error!.traceback).toContain("ZeroDivisionError");
  });

  if (capabilities.RICH_RESULTS) {
    contractTest("run-code.rich-results", "with RICH_RESULTS, `1+1` gives a text/plain main result from the backend's own channel", async () => {
      await using sandbox = await harness.createSandbox();
      const execution = await sandbox.runCode("1+1");
      expect(Array.isArray(execution.results), `execution.results is an array (got ${JSON.stringify(execution.results)})`).toBe(true);
      const main = execution.results!.find((result) => result.isMainResult);
      expect(main?.data["text/plain"]).toBe("2");
    });

    contractTest("run-code.rich-html", "with RICH_RESULTS, an object with _repr_html_ as the last expression gives text/html", async () => {
      await using sandbox = await harness.createSandbox();
      const execution = await sandbox.runCode("class Page:\n    def _repr_html_(self):\n        return '<b>sbx</b>'\nPage()");
      expect(execution.error).toBeNull();
      const main = execution.results!.filter((result) => result.isMainResult);
      expect(main).toHaveLength(1);
      expect(main[0]!.data["text/html"]).toBe("<b>sbx</b>");
      expect(typeof main[0]!.data["text/plain"]).toBe("string");
      expect(execution.stdout).toBe("");
    });

    contractTest("run-code.rich-display-order", "with RICH_RESULTS, display() of two objects gives two results, in order, not main", async () => {
      await using sandbox = await harness.createSandbox();
      // Values whose text/plain has no quotes: E2B's server strips one pair of enclosing quotes from text/plain.
      const execution = await sandbox.runCode("display(1)\ndisplay([2, 3])\nprint('printed')");
      expect(execution.error).toBeNull();
      const displayed = execution.results!.filter((result) => !result.isMainResult);
      expect(displayed.map((result) => result.data["text/plain"])).toEqual(["1", "[2, 3]"]);
      expect(execution.results!.filter((result) => result.isMainResult)).toEqual([]);
      expect(execution.stdout).toBe("printed\n");
    });

    contractTest("run-code.rich-png", "with RICH_RESULTS, _repr_png_ bytes arrive as base64 image/png", async () => {
      await using sandbox = await harness.createSandbox();
      const execution = await sandbox.runCode("class Picture:\n    def _repr_png_(self):\n        return b'\\x89PNG\\r\\n\\x1a\\nsbx'\nPicture()");
      expect(execution.error).toBeNull();
      const main = execution.results!.find((result) => result.isMainResult);
      expect(Buffer.from(main!.data["image/png"]!, "base64")).toEqual(Buffer.from("\x89PNG\r\n\x1a\nsbx", "latin1"));
    });
  } else {
    contractTest("run-code.results-null", "without RICH_RESULTS, results is null (never parsed from stdout)", async () => {
      await using sandbox = await harness.createSandbox();
      const execution = await sandbox.runCode("1+1");
      expect(execution.results).toBeNull();
      expect((await sandbox.runCode("print(2)")).results).toBeNull();
    });
  }

  contractTest("run-code.fresh-each-run", "without a contextId every run starts fresh", async () => {
    await using sandbox = await harness.createSandbox();
    expect((await sandbox.runCode("sbx_contract_value = 1")).error).toBeNull();
    const second = await sandbox.runCode("print(sbx_contract_value)");
    expect(second.error?.name).toBe("NameError");
  });
}

/** Registers the code context tests (`STATEFUL_CODE`), or their refusal when it is off. */
export function registerCodeContextsTests(harness: ContractHarness): void {
  const { contractTest, capabilities } = harness;
  if (!capabilities.STATEFUL_CODE) {
    contractTest(
      "code-contexts.refused",
      "createCodeContext() and runCode({ contextId }) raise SBX_CAPABILITY_NOT_SUPPORTED when STATEFUL_CODE is off",
      async () => {
        await using sandbox = await harness.createSandbox();
        const created = await expectCapabilityRefused(harness, () => sandbox.createCodeContext(), "STATEFUL_CODE");
        expect((created as { supportedBy?: string[] }).supportedBy).toContain("e2b");
        await expectCapabilityRefused(harness, () => sandbox.runCode("x = 1", { contextId: "sbx-contract-context" }), "STATEFUL_CODE");
      },
    );
    return;
  }

  contractTest("code-contexts.state-kept", "variables survive between runs in the same context", async () => {
    await using sandbox = await harness.createSandbox();
    const context = await sandbox.createCodeContext();
    expect(typeof context.id).toBe("string");
    expect(context.language).toBe("python");
    expect((await sandbox.runCode("x = 41", { contextId: context.id })).error).toBeNull();
    const next = await sandbox.runCode("print(x + 1)", { contextId: context.id });
    expect(next.error).toBeNull();
    expect(next.stdout).toBe("42\n");
  });

  contractTest("code-contexts.isolated", "another context (and a run without context) does not see the variables", async () => {
    await using sandbox = await harness.createSandbox();
    const first = await sandbox.createCodeContext();
    const second = await sandbox.createCodeContext();
    expect(second.id).not.toBe(first.id);
    await sandbox.runCode("x = 41", { contextId: first.id });
    expect((await sandbox.runCode("print(x)", { contextId: second.id })).error?.name).toBe("NameError");
    expect((await sandbox.runCode("print(x)")).error?.name).toBe("NameError");
  });

  contractTest("code-contexts.timeout-keeps-others", "a runaway cell is stopped on timeout while another context keeps its state", async () => {
    await using sandbox = await harness.createSandbox();
    const runaway = await sandbox.createCodeContext();
    const other = await sandbox.createCodeContext();
    expect((await sandbox.runCode("kept = 'sbx-kept'", { contextId: other.id })).error).toBeNull();
    const timedOut = await expectSbxError(sandbox.runCode("while True:\n    pass", { contextId: runaway.id, timeoutMs: 1500 }), "SBX_TIMEOUT");
    expect((timedOut as { timeoutMs?: number }).timeoutMs).toBe(1500);
    const after = await sandbox.runCode("print(kept)", { contextId: other.id });
    expect(after.error).toBeNull();
    expect(after.stdout).toBe("sbx-kept\n");
  });
}

/** The runCode group on its own. */
export function describeRunCodeContract(name: string, factory: SandboxProviderFactoryForContract, options?: SandboxContractOptions): void {
  describeGroup("runCode", name, factory, options, registerRunCodeTests);
}

/** The code contexts group on its own. */
export function describeCodeContextsContract(name: string, factory: SandboxProviderFactoryForContract, options?: SandboxContractOptions): void {
  describeGroup("code contexts", name, factory, options, registerCodeContextsTests);
}
