/**
 * Helpers for a package's own tests that run on real backends and check the examples its docs show (the framework
 * integrations' tests use them): a backend that is not usable here skips loudly, or fails under `SBX_REQUIRE`, as the
 * contract suite does; an example region is read from its file exactly as the docs must show it.
 */
import { readFile } from "node:fs/promises";
import type { BackendStatus } from "@sbx/core/adapter";
import { requiredBackends } from "./harness.js";

/** A backend a package's tests run on: its name, whether it is usable here, and the `createSandbox` target. */
export interface IntegrationTestBackend {
  readonly name: string;
  readonly usable: boolean;
  /** The `createSandbox` target, for example `"fake://"` or `"docker://sbx-test/python:3.11"`. */
  readonly target: string;
}

/**
 * Asks `detect` once whether `backend` is usable for `suite`'s tests (for example "the Mastra integration"). Not
 * usable: throws when `SBX_REQUIRE` names the backend (CI must not pass without it), else warns that the tests skip,
 * with the reason and remedy, and answers false. A `detect` that throws counts as not usable.
 */
export async function backendUsableForTests(options: {
  readonly backend: string;
  readonly suite: string;
  readonly detect: () => Promise<BackendStatus>;
}): Promise<boolean> {
  const status = await options.detect().catch((error: unknown) => ({
    usable: false,
    reason: `detect() failed: ${error instanceof Error ? error.message : String(error)}`,
    remedy: "",
  }));
  if (status.usable) return true;
  const message = `${options.backend} is not usable here: ${status.reason} ${status.remedy}`.trim();
  if (requiredBackends().includes(options.backend)) throw new Error(`SBX_REQUIRE names ${options.backend}, but ${message}`);
  console.warn(`\n[sbx] SKIPPING ${options.suite}'s ${options.backend} tests: ${message}\n`);
  return false;
}

/** The lines of `file` between `// #region name` and `// #endregion name`, dedented: what a doc page must show verbatim. */
export async function exampleRegion(file: URL, name: string): Promise<string> {
  const lines = (await readFile(file, "utf8")).split("\n");
  const start = lines.findIndex((line) => line.trim() === `// #region ${name}`);
  const end = lines.findIndex((line) => line.trim() === `// #endregion ${name}`);
  if (start < 0 || end < start) throw new Error(`${file.pathname} has no region "${name}"`);
  const body = lines.slice(start + 1, end);
  const indent = Math.min(...body.filter((line) => line.trim()).map((line) => line.length - line.trimStart().length));
  return body.map((line) => line.slice(indent)).join("\n");
}
